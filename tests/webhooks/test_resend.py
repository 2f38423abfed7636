"""Manual re-send (service and admin action), the deliveries admin, and the operator's webhooks switch."""

import re
import threading

import pytest
from django.db import connections

from tenants.models import Tenant
from tests.factories import SETUP, delivery_due_now
from tests.support.receiver import Reply
from tests.support.webhooks import delivery_of, finalize_with_webhook
from webhooks.delivery import DISABLED_ERROR, webhook_delivery_attempt
from webhooks.models import WebhookDelivery
from webhooks.services import delivery_resend


@pytest.fixture
def failed_delivery(api, receiver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [0]  # one attempt, then failed
    receiver.script(Reply(status=500, body=b"down"))
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))
    webhook_delivery_attempt(delivery_id=delivery.id)
    delivery.refresh_from_db()
    assert delivery.status == "failed"
    return delivery


def test_resending_a_failed_delivery_sends_the_same_event_again_and_numbers_attempts_on(failed_delivery, receiver):
    resent = delivery_resend(delivery=failed_delivery, actor=SETUP)

    assert (resent.pk, resent.status, resent.attempt_count) == (failed_delivery.pk, "pending", 1)
    webhook_delivery_attempt(delivery_id=resent.pk)
    resent.refresh_from_db()
    assert resent.status == "delivered"
    assert [(a.number, a.status_code) for a in resent.attempts.all()] == [(1, 500), (2, 200)]
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == resent.pk
    assert first.body == second.body


def test_a_resend_starts_a_fresh_retry_schedule(failed_delivery, receiver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [0, 60]
    receiver.script(Reply(status=500))

    delivery_resend(delivery=failed_delivery, actor=SETUP)
    webhook_delivery_attempt(delivery_id=failed_delivery.pk)

    failed_delivery.refresh_from_db()
    assert failed_delivery.status == "pending"  # attempt 2 is the first of a new cycle, so one retry is left


def test_resending_a_delivered_delivery_sends_it_once_more(api, receiver):
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))
    webhook_delivery_attempt(delivery_id=delivery.id)

    delivery_resend(delivery=WebhookDelivery.objects.get(pk=delivery.pk), actor=SETUP)
    webhook_delivery_attempt(delivery_id=delivery.id)

    assert [r.headers["webhook-id"] for r in receiver.received] == [delivery.id, delivery.id]
    assert WebhookDelivery.objects.get(pk=delivery.pk).attempt_count == 2


def test_the_admin_lists_deliveries_and_shows_each_attempt(failed_delivery, operator):
    listing = operator.get("/admin/webhooks/webhookdelivery/")
    assert listing.status_code == 200 and failed_delivery.pk in listing.content.decode()

    page = operator.get(f"/admin/webhooks/webhookdelivery/{failed_delivery.pk}/change/")
    html = re.sub(r"\s+", "", page.content.decode())
    assert page.status_code == 200
    assert "Webhookattempts" in html
    assert '<tdclass="field-status_code"><p>500</p></td>' in html
    assert '<tdclass="field-response_excerpt"><p>down</p></td>' in html
    attempted = failed_delivery.attempts.get().attempted_at.strftime("%Y-%m-%d%H:%M:%S")
    assert f'<tdclass="field-attempted"><p>{attempted}' in html


def test_the_admin_resend_action_queues_the_delivery_again(failed_delivery, operator, receiver):
    response = operator.post(
        "/admin/webhooks/webhookdelivery/",
        {"action": "resend", "_selected_action": [failed_delivery.pk]},
        follow=True,
    )

    assert response.status_code == 200
    assert "1 delivery queued to be sent again." in response.content.decode()
    failed_delivery.refresh_from_db()
    assert failed_delivery.status == "pending" and failed_delivery.cycle_first_attempt == 2


def test_the_operator_switch_enables_webhooks_for_a_tenant(operator, onboarded, api, receiver):
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(webhooks_enabled=False)
    before = finalize_with_webhook(api, receiver.url())

    operator.post("/admin/tenants/tenant/", {"action": "enable_webhooks", "_selected_action": [onboarded.tenant.pk]})
    after = finalize_with_webhook(api, receiver.url())

    assert Tenant.objects.get(pk=onboarded.tenant.pk).webhooks_enabled
    assert not WebhookDelivery.objects.filter(subject_ref=before["sessionId"]).exists()
    assert WebhookDelivery.objects.filter(subject_ref=after["sessionId"]).exists()


def _attempt_now(delivery):
    delivery_due_now(delivery)
    return webhook_delivery_attempt(delivery_id=delivery.id)


def test_switching_webhooks_off_stops_retries_already_in_the_outbox_until_it_is_back_on(
    operator, onboarded, api, receiver
):
    receiver.script(Reply(status=500))
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))
    webhook_delivery_attempt(delivery_id=delivery.id)
    switch = {"_selected_action": [onboarded.tenant.pk]}

    operator.post("/admin/tenants/tenant/", {"action": "disable_webhooks", **switch})
    _attempt_now(delivery)

    assert len(receiver.received) == 1
    assert delivery.attempts.get(number=2).error == DISABLED_ERROR
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == "pending"

    operator.post("/admin/tenants/tenant/", {"action": "enable_webhooks", **switch})
    _attempt_now(delivery)

    assert len(receiver.received) == 2
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == "delivered"


def test_a_failure_of_an_attempt_made_before_a_resend_leaves_the_resent_delivery_as_the_resend_left_it(
    api, receiver, settings, operator, transactional_db
):
    # An attempt whose lease ran out while its receiver was slow; the operator re-sends; then the slow
    # attempt's failure comes in: the re-send's fresh schedule stands, the old failure only logs.
    settings.WEBHOOK_SEND_LEASE_SECONDS = 0  # the lease runs out at once: a re-send does not wait for it
    answer = threading.Event()
    receiver.script(Reply(status=500, hold=answer))
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))

    def slow_attempt():
        try:
            webhook_delivery_attempt(delivery_id=delivery.id)
        finally:
            connections.close_all()

    attempt = threading.Thread(target=slow_attempt)
    attempt.start()
    receiver.wait_for(1)
    operator.post("/admin/webhooks/webhookdelivery/", {"action": "resend", "_selected_action": [delivery.pk]})
    resent = WebhookDelivery.objects.get(pk=delivery.pk)
    assert (resent.status, resent.cycle_first_attempt) == ("pending", 2)

    answer.set()
    attempt.join(10)

    after = WebhookDelivery.objects.get(pk=delivery.pk)
    assert after.attempts.get(number=1).status_code == 500
    assert (after.status, after.attempt_count, after.next_attempt_at) == ("pending", 1, resent.next_attempt_at)
