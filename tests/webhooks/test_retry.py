"""The retry schedule of CONTRACT 5: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, +-20 % jitter."""

import random
from datetime import timedelta

from django.utils import timezone

from tests.support.receiver import Reply
from tests.support.webhooks import delivery_of, finalize_with_webhook
from webhooks.delivery import next_retry_after, retry_delay, webhook_delivery_attempt
from webhooks.models import WebhookDelivery

CONTRACT_WAITS = [5, 300, 1800, 7200, 18000, 36000, 36000]


def test_without_jitter_the_waits_after_each_failure_are_the_contracts_and_the_eighth_is_the_last(settings):
    settings.WEBHOOK_RETRY_JITTER = 0
    waits = [next_retry_after(n) for n in range(1, 9)]
    assert waits == [timedelta(seconds=s) for s in CONTRACT_WAITS] + [None]


def test_jitter_stays_within_20_percent_and_spreads_retries():
    rng = random.Random(7)
    waits = [retry_delay(300, rng=rng).total_seconds() for _ in range(2000)]
    assert 240 <= min(waits) < 250
    assert 350 < max(waits) <= 360


def test_a_failed_first_attempt_is_retried_about_5_seconds_later_by_default(api, receiver, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [0, 5, 300, 1800, 7200, 18000, 36000, 36000]  # the shipped default
    receiver.script(Reply(status=500))
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))

    before = timezone.now()
    result = webhook_delivery_attempt(delivery_id=delivery.id)

    assert result.status_code == 500
    delivery.refresh_from_db()
    assert delivery.status == "pending" and delivery.attempt_count == 1
    assert before + timedelta(seconds=4) <= delivery.next_attempt_at <= timezone.now() + timedelta(seconds=6)
    assert webhook_delivery_attempt(delivery_id=delivery.id) is None  # not due yet: nothing is sent early
    assert len(receiver.received) == 1


def test_an_attempt_log_row_records_time_status_latency_and_the_response(api, receiver):
    receiver.script(Reply(status=429, body=b'{"error":"slow down"}'))
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))
    before = timezone.now()

    webhook_delivery_attempt(delivery_id=delivery.id)

    attempt = WebhookDelivery.objects.get(pk=delivery.pk).attempts.get()
    assert attempt.number == 1 and attempt.status_code == 429
    assert attempt.response_excerpt == '{"error":"slow down"}' and attempt.error == ""
    assert before <= attempt.attempted_at <= timezone.now()
    assert attempt.latency_ms is not None and attempt.latency_ms < 2000


def test_a_delivery_is_retried_then_delivered_or_retried_then_failed(api, receiver, settings):
    settings.WEBHOOK_RETRY_JITTER = 0
    settings.WEBHOOK_RETRY_SCHEDULE = [0, 5]
    receiver.script(Reply(status=500), Reply(status=200), Reply(status=500), Reply(status=500))
    delivered = delivery_of(finalize_with_webhook(api, receiver.url()))
    failed = delivery_of(finalize_with_webhook(api, receiver.url()))

    before = timezone.now()
    webhook_delivery_attempt(delivery_id=delivered.id)
    delivered.refresh_from_db()
    assert (delivered.status, delivered.attempt_count, delivered.delivered_at) == ("pending", 1, None)
    assert before + timedelta(seconds=5) <= delivered.next_attempt_at <= timezone.now() + timedelta(seconds=5)

    WebhookDelivery.objects.filter(pk=delivered.pk).update(next_attempt_at=timezone.now())
    webhook_delivery_attempt(delivery_id=delivered.id)
    delivered.refresh_from_db()
    assert (delivered.status, delivered.attempt_count, delivered.next_attempt_at) == ("delivered", 2, None)
    assert delivered.delivered_at >= before

    webhook_delivery_attempt(delivery_id=failed.id)
    WebhookDelivery.objects.filter(pk=failed.pk).update(next_attempt_at=timezone.now())
    webhook_delivery_attempt(delivery_id=failed.id)
    failed.refresh_from_db()
    assert (failed.status, failed.attempt_count, failed.next_attempt_at, failed.delivered_at) == (
        "failed",
        2,
        None,
        None,
    )
