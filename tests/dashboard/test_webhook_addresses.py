"""Webhook settings per tenant and mode: a default notification address, and "Send test webhook"."""

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tenants.models import AuditLogEntry
from tests.factories import SETUP
from tests.support.api_client import ApiClient
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookDelivery


def save_address(dashboard, mode, url):
    return dashboard.post("/dashboard/webhooks/address/", {"mode": mode, "url": url}, follow=True)


def send_test(dashboard, mode):
    return dashboard.post("/dashboard/webhooks/test/", {"mode": mode}, follow=True)


def deliver(delivery: WebhookDelivery):
    webhook_delivery_attempt(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    return delivery


def test_a_session_without_notification_url_notifies_its_modes_default_address(dashboard, onboarded, receiver):
    page = save_address(dashboard, "test", receiver.url("/sandbox-hooks"))
    assert f'value="{receiver.url("/sandbox-hooks")}"' in page.content.decode()
    sandbox, live = ApiClient(onboarded.test_key), ApiClient(onboarded.live_key)
    session = sandbox.create_session()
    assert session["notificationUrl"] is None  # the session shows what the partner sent
    own_address = sandbox.create_session(notification_url=receiver.url("/own"))
    live_session = live.create_session()

    for created in (session, own_address):
        sandbox.post(f"/v1/test/sessions/{created['sessionId']}/advance", {"to": "approved"})
    live.post(f"/v1/sessions/{live_session['sessionId']}/cancel")

    by_session = {delivery.subject_ref: delivery for delivery in WebhookDelivery.objects.all()}
    assert set(by_session) == {session["sessionId"], own_address["sessionId"]}  # no live default: no live webhook
    assert by_session[own_address["sessionId"]].url == receiver.url("/own")
    assert deliver(by_session[session["sessionId"]]).status == "delivered"
    (received,) = receiver.received
    assert received.path == "/sandbox-hooks"
    event = Webhook(onboarded.tenant.test_webhook_secret).verify(received.body, received.headers)
    assert (event["data"]["sessionId"], event["data"]["mode"]) == (session["sessionId"], "test")


def test_send_test_webhook_sends_a_signed_marked_test_event_whose_attempt_is_logged(
    dashboard, onboarded, receiver, staff_user
):
    save_address(dashboard, "live", receiver.url())

    page = send_test(dashboard, "live")

    delivery = WebhookDelivery.objects.get()
    assert (delivery.event_type, delivery.mode, delivery.url, delivery.subject_ref) == (
        "webhook.test",
        "live",
        receiver.url(),
        "",
    )
    assert f"Test webhook {delivery.pk} queued" in page.content.decode()
    assert deliver(delivery).status == "delivered"
    (received,) = receiver.received
    event = Webhook(onboarded.tenant.webhook_secret).verify(received.body, received.headers)
    assert event["event"] == "webhook.test" and event["data"]["test"] is True and event["data"]["mode"] == "live"
    assert "sessionId" not in event["data"]
    with pytest.raises(WebhookVerificationError):
        Webhook(onboarded.tenant.test_webhook_secret).verify(received.body, received.headers)
    (attempt,) = delivery.attempts.all()
    assert attempt.status_code == 200
    listing = dashboard.get("/dashboard/webhooks/").content.decode()
    assert f'id="delivery-{delivery.pk}"' in listing and "webhook.test" in listing
    actions = list(
        AuditLogEntry.objects.exclude(actor_label=SETUP.label)
        .order_by("id")
        .values_list("action", "actor", "target_label")
    )
    assert actions == [
        ("webhook_address.changed", staff_user.pk, receiver.url()),
        ("webhook.test_sent", staff_user.pk, "webhook.test"),
    ]


# Addresses a webhook could never be sent to, and why (webhooks.addresses, the one rule of both doors).
REFUSED_ADDRESSES = [
    ("http://partner.example/hooks", "must use https"),
    ("https://user:pw@partner.example/hooks", "must not contain a user name or password"),
    ("https://10.0.0.5/hooks", "must point to a public host"),
    ("not a url", "must be an absolute http or https URL"),
    ("https://partner.example:70000/hooks", "must have a port between 1 and 65535"),
]


@pytest.mark.parametrize("url, why", REFUSED_ADDRESSES)
def test_an_address_the_sender_could_not_use_is_refused_and_nothing_is_saved(dashboard, onboarded, url, why):
    page = save_address(dashboard, "live", url).content.decode()

    assert f"The address was not saved: it {why}." in page
    assert 'value="https://' not in page.split('id="webhook-url-live"')[1].split(">")[0]
    assert not AuditLogEntry.objects.exclude(actor_label=SETUP.label).exists()


@pytest.mark.parametrize("url, why", REFUSED_ADDRESSES)
def test_the_api_refuses_a_notification_url_for_the_reason_the_dashboard_gives(dashboard, onboarded, url, why):
    body = {"subject": "user-42", "age_limit": 18, "notification_url": url}
    answer = ApiClient(onboarded.live_key).post("/v1/sessions", body)
    page = save_address(dashboard, "live", url).content.decode()

    assert answer.status_code == 400
    assert [(error["field"], error["message"]) for error in answer.json()["errors"]] == [("notification_url", why)]
    assert f"The address was not saved: it {why}." in page


def test_an_address_can_be_removed_and_then_no_test_can_be_sent(dashboard, onboarded):
    save_address(dashboard, "test", "https://partner.example/hooks")
    save_address(dashboard, "test", "")

    page = send_test(dashboard, "test").content.decode()

    assert "Set a default address first" in page
    assert not WebhookDelivery.objects.exists()
    assert list(
        AuditLogEntry.objects.exclude(actor_label=SETUP.label).order_by("id").values_list("target_label", flat=True)
    ) == [
        "https://partner.example/hooks",
        "(none)",
    ]


def test_no_test_webhook_while_the_operator_has_not_enabled_sending(dashboard, onboarded):
    save_address(dashboard, "live", "https://partner.example/hooks")
    onboarded.tenant.webhooks_enabled = False
    onboarded.tenant.save(update_fields=["webhooks_enabled"])

    page = send_test(dashboard, "live").content.decode()

    assert "Webhook sending is not enabled for your account" in page
    assert not WebhookDelivery.objects.exists()


def test_addresses_belong_to_one_tenant(dashboard, onboarded, rival, receiver):
    save_address(dashboard, "test", receiver.url())
    session = ApiClient(rival.test_key).create_session()

    ApiClient(rival.test_key).post(f"/v1/test/sessions/{session['sessionId']}/advance", {"to": "approved"})

    assert not WebhookDelivery.objects.exists()  # the rival's session had no address, and ours is not its


def test_send_test_webhook_is_throttled_per_tenant(dashboard, onboarded, rival, receiver):
    from dashboard.webhook_addresses import TEST_WEBHOOK_BURST

    save_address(dashboard, "live", receiver.url())
    pages = [send_test(dashboard, "live").content.decode() for _ in range(TEST_WEBHOOK_BURST + 3)]

    assert WebhookDelivery.objects.filter(tenant=onboarded.tenant).count() == TEST_WEBHOOK_BURST
    assert "Too many test webhooks" in pages[-1] and "queued" not in pages[-1]
    from django.contrib.auth import get_user_model
    from django.test import Client

    other = Client()
    other.force_login(get_user_model().objects.get(username="mallory"))
    other.post("/dashboard/webhooks/address/", {"mode": "live", "url": receiver.url("/rival")})
    other.post("/dashboard/webhooks/test/", {"mode": "live"})
    assert WebhookDelivery.objects.filter(tenant=rival.tenant).count() == 1  # another tenant has its own budget
