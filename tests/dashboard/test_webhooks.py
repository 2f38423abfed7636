"""The webhooks page: sending status, egress addresses, the signing secret (reveal, rotate) and re-sending."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tenants.models import AuditLogEntry, Tenant
from tests.factories import SETUP, delivery_with_attempt, finished_session
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookDelivery


def _revealed_secret(response) -> str:
    return re.search(rb'id="webhook-secret"[^>]*>([^<]+)<', response.content).group(1).decode()


def _send_webhook_of_a_new_session(tenant, receiver):
    session = finished_session(tenant, notification_url=receiver.url())
    webhook_delivery_attempt(delivery_id=WebhookDelivery.objects.get(subject_ref=session.id).pk)
    return receiver.wait_for(1)[-1]


def test_the_secret_stays_hidden_until_revealed_with_a_post_that_is_audited(dashboard, onboarded, staff_user):
    secret = onboarded.tenant.webhook_secret
    assert secret.encode() not in dashboard.get("/dashboard/webhooks/").content

    response = dashboard.post("/dashboard/webhooks/secret/reveal/")

    assert _revealed_secret(response) == secret
    entry = AuditLogEntry.objects.exclude(actor_label=SETUP.label).get()
    assert (entry.action, entry.actor, entry.tenant) == ("webhook_secret.revealed", staff_user, onboarded.tenant)
    assert secret not in str(entry.__dict__)  # the log names the secret by its last characters only
    assert entry.target_label == f"whsec_…{secret[-4:]}"


def test_rotating_shows_a_new_secret_and_both_sign_during_the_overlap(dashboard, onboarded, receiver):
    old_secret = onboarded.tenant.webhook_secret
    assert dashboard.get("/dashboard/webhooks/secret/rotate/").status_code == 200
    assert Tenant.objects.get(pk=onboarded.tenant.pk).webhook_secret == old_secret  # the GET only asks

    response = dashboard.post("/dashboard/webhooks/secret/rotate/")

    new_secret = _revealed_secret(response)
    assert new_secret != old_secret and new_secret.startswith("whsec_")
    assert b"Rotation in progress" in response.content
    tenant = Tenant.objects.get(pk=onboarded.tenant.pk)
    overlap = tenant.webhook_secret_previous_expires_at - timezone.now()
    assert timedelta(hours=23, minutes=59) < overlap <= timedelta(hours=24)
    received = _send_webhook_of_a_new_session(tenant, receiver)
    assert len(received.headers["webhook-signature"].split(" ")) == 2
    Webhook(old_secret).verify(received.body, received.headers)
    Webhook(new_secret).verify(received.body, received.headers)
    entry = AuditLogEntry.objects.get(action="webhook_secret.rotated")
    assert entry.extra["previous"] == f"whsec_…{old_secret[-4:]}"


def test_after_the_overlap_only_the_new_secret_signs(dashboard, onboarded, receiver):
    old_secret = onboarded.tenant.webhook_secret
    new_secret = _revealed_secret(dashboard.post("/dashboard/webhooks/secret/rotate/"))
    # 24 hours later:
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(webhook_secret_previous_expires_at=timezone.now())

    received = _send_webhook_of_a_new_session(Tenant.objects.get(pk=onboarded.tenant.pk), receiver)

    assert len(received.headers["webhook-signature"].split(" ")) == 1
    Webhook(new_secret).verify(received.body, received.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old_secret).verify(received.body, received.headers)
    assert b"Rotation in progress" not in dashboard.get("/dashboard/webhooks/").content


def test_a_tenant_without_a_secret_gets_its_first_one_by_rotating(dashboard, onboarded):
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(webhook_secret="")

    response = dashboard.post("/dashboard/webhooks/secret/rotate/")

    assert response.status_code == 200
    secret = Tenant.objects.get(pk=onboarded.tenant.pk).webhook_secret
    assert secret.startswith("whsec_") and _revealed_secret(response) == secret
    assert "Every webhook for live events is signed with it from now on." in response.content.decode()


def _revealed_test_secret(response) -> str:
    return re.search(rb'id="webhook-secret-test"[^>]*>([^<]+)<', response.content).group(1).decode()


def test_the_test_mode_secret_is_shown_beside_the_live_one_and_rotated_alike(dashboard, onboarded):
    live, test = onboarded.tenant.webhook_secret, onboarded.tenant.test_webhook_secret
    page = dashboard.get("/dashboard/webhooks/").content.decode()
    assert "Signing secret: live events" in page and "Signing secret: test (sandbox) events" in page
    assert live not in page and test not in page

    revealed = dashboard.post("/dashboard/webhooks/secret/reveal/", {"mode": "test"})
    assert _revealed_test_secret(revealed) == test and live not in revealed.content.decode()

    assert dashboard.get("/dashboard/webhooks/secret/rotate/?mode=test").status_code == 200
    rotated = dashboard.post("/dashboard/webhooks/secret/rotate/", {"mode": "test"})
    tenant = Tenant.objects.get(pk=onboarded.tenant.pk)
    assert _revealed_test_secret(rotated) == tenant.test_webhook_secret != test
    assert (tenant.test_webhook_secret_previous, tenant.webhook_secret) == (test, live)  # the live one is untouched
    overlap = tenant.test_webhook_secret_previous_expires_at - timezone.now()
    assert timedelta(hours=23, minutes=59) < overlap <= timedelta(hours=24)
    assert [entry.extra["mode"] for entry in AuditLogEntry.objects.exclude(actor_label=SETUP.label).order_by("pk")] == [
        "test",
        "test",
    ]


def test_revealing_and_rotating_take_a_post(dashboard, onboarded):
    assert dashboard.get("/dashboard/webhooks/secret/reveal/").status_code == 405
    assert not AuditLogEntry.objects.exclude(actor_label=SETUP.label).exists()


def test_the_page_says_whether_the_operator_enabled_sending_and_lists_egress_addresses(dashboard, onboarded, settings):
    settings.WEBHOOK_EGRESS_IPS = ["203.0.113.10", "2001:db8::10"]

    enabled = dashboard.get("/dashboard/webhooks/").content.decode()
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(webhooks_enabled=False)
    disabled = dashboard.get("/dashboard/webhooks/").content.decode()

    assert re.search(r'id="webhooks-status">Enabled<', enabled)
    assert re.search(r'id="webhooks-status">Not enabled<', disabled)
    assert "203.0.113.10" in enabled and "2001:db8::10" in enabled


def test_recent_deliveries_are_listed_with_their_attempts(dashboard, onboarded):
    session, delivery = delivery_with_attempt(onboarded.tenant, status_code=503)

    page = dashboard.get("/dashboard/webhooks/").content.decode()

    block = page.split(f'id="delivery-{delivery.pk}"', 1)[1].split("</details>", 1)[0]
    assert session.id in block and "https://hooks.partner.test/av" in block
    assert ">503<" in block and "120 ms" in block and "upstream down" in block
    assert f"/dashboard/webhooks/deliveries/{delivery.pk}/resend/" in block


def test_re_send_sends_the_same_event_again_and_is_audited(dashboard, onboarded, receiver, staff_user):
    first = _send_webhook_of_a_new_session(onboarded.tenant, receiver)
    delivery = WebhookDelivery.objects.get(pk=first.headers["webhook-id"])
    assert delivery.status == "delivered"

    response = dashboard.post(
        f"/dashboard/webhooks/deliveries/{delivery.pk}/resend/",
        {"next": f"/dashboard/sessions/{delivery.subject_ref}/"},
    )

    assert response.status_code == 302 and response["Location"] == f"/dashboard/sessions/{delivery.subject_ref}/"
    webhook_delivery_attempt(delivery_id=delivery.pk)  # what the queued Celery task runs
    again = receiver.wait_for(2)[-1]
    assert again.headers["webhook-id"] == delivery.pk and again.body == first.body
    entry = AuditLogEntry.objects.get(action="webhook.resent")
    assert (entry.actor, entry.target_id) == (staff_user, delivery.pk)


def test_re_send_is_refused_with_a_message_while_the_operator_has_sending_switched_off(dashboard, onboarded):
    _, delivery = delivery_with_attempt(onboarded.tenant)
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(webhooks_enabled=False)

    response = dashboard.post(f"/dashboard/webhooks/deliveries/{delivery.pk}/resend/", follow=True)

    assert "sending is not enabled" in response.content.decode()
    assert WebhookDelivery.objects.get(pk=delivery.pk).cycle_first_attempt == 1  # not queued again
    assert not AuditLogEntry.objects.filter(action="webhook.resent").exists()


def test_re_send_ignores_a_next_address_on_another_site(dashboard, onboarded):
    _, delivery = delivery_with_attempt(onboarded.tenant)

    response = dashboard.post(f"/dashboard/webhooks/deliveries/{delivery.pk}/resend/", {"next": "https://evil.test/"})

    assert response["Location"] == "/dashboard/webhooks/"
