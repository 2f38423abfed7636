"""The outbox never loses a webhook: broker outages, repeated or concurrent runs, and a killed worker."""

import os
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connections
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from ageverify.celery import app
from sessions_api.state_machine import session_cancel
from tests.support.database import current_database_url
from tests.support.outages import broker_unreachable
from tests.support.receiver import Reply
from tests.support.waiting import wait_until
from tests.support.webhooks import delivery_of, finalize_with_webhook, wait_for_status
from tests.support.workers import in_process_worker, tasks_settled
from webhooks.delivery import LOST_ATTEMPT_ERROR, webhook_delivery_attempt
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_deliveries_sweep
from webhooks.tasks import webhook_deliveries_sweep as sweep_task

REPO = Path(__file__).resolve().parents[2]


def test_the_beat_schedule_runs_the_sweep_every_5_seconds():
    entry = django_settings.CELERY_BEAT_SCHEDULE["webhooks-sweep-due"]
    assert entry["task"] in app.tasks
    assert entry["schedule"] == timedelta(seconds=5)


def test_a_broker_outage_at_finalization_delays_the_webhook_until_the_sweep(api, receiver, celery_worker):
    with broker_unreachable():
        session = finalize_with_webhook(api, receiver.url())

    delivery = delivery_of(session)
    # The publish failed and said so: the row is left to the sweep (not marked queued), and nothing queued runs.
    assert (delivery.status, delivery.attempt_count, delivery.queued_at) == ("pending", 0, None)
    wait_until(tasks_settled)
    assert receiver.received == []

    sweep_task.delay()  # as beat does

    [request] = receiver.wait_for(1)
    assert request.headers["webhook-id"] == delivery.id
    wait_until(lambda: WebhookDelivery.objects.get(pk=delivery.pk).status == "delivered")


def test_running_the_attempt_again_after_delivery_sends_nothing(api, receiver, celery_worker):
    session = finalize_with_webhook(api, receiver.url())
    receiver.wait_for(1)
    delivery = wait_for_status(session, "delivered")

    assert webhook_delivery_attempt(delivery_id=delivery.id) is None
    assert webhook_deliveries_sweep() == 0
    wait_until(tasks_settled)  # whatever was queued has run
    assert len(receiver.received) == 1
    assert delivery_of(session).attempt_count == 1


def test_concurrent_runs_of_one_delivery_and_a_run_during_the_send_send_it_once(api, receiver, transactional_db):
    # No worker runs here: the queued task stays in Redis, and "workers" race for the row by hand.
    answer = threading.Event()
    receiver.script(Reply(hold=answer))
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))
    results = []

    def run():
        try:
            results.append(webhook_delivery_attempt(delivery_id=delivery.id))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    receiver.wait_for(1)
    # One attempt is in flight (claimed and committed): a third run now must not send either.
    assert webhook_delivery_attempt(delivery_id=delivery.id) is None
    answer.set()
    for thread in threads:
        thread.join(10)

    assert len(receiver.received) == 1
    assert sorted(r.status_code if r else 0 for r in results) == [0, 200]
    assert WebhookDelivery.objects.get(pk=delivery.pk).attempt_count == 1


def test_the_sweep_queues_a_due_delivery_once_per_requeue_window_and_never_a_delivered_one(api, receiver, settings):
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))

    def requeue_window_passes():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            queued_at=timezone.now() - timedelta(seconds=settings.WEBHOOK_REQUEUE_AFTER_SECONDS + 1)
        )

    assert webhook_deliveries_sweep() == 0  # its own task was queued on commit: not twice
    requeue_window_passes()
    assert webhook_deliveries_sweep() == 1
    assert webhook_deliveries_sweep() == 0
    requeue_window_passes()
    assert webhook_deliveries_sweep() == 1

    webhook_delivery_attempt(delivery_id=delivery.id)
    requeue_window_passes()
    assert webhook_deliveries_sweep() == 0


def test_a_worker_killed_mid_send_leads_to_one_redelivery_with_the_same_webhook_id(
    transactional_db, api, onboarded, receiver, tls_files
):
    hold = threading.Event()
    receiver.script(Reply(hold=hold))
    env = {
        **os.environ,
        "DATABASE_URL": current_database_url(),
        "WEBHOOK_ALLOW_PRIVATE_TARGETS": "1",
        "WEBHOOK_CA_BUNDLE": str(tls_files.ca_bundle),
        "WEBHOOK_SEND_LEASE_SECONDS": "2",
    }
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "ageverify",
            "worker",
            "--pool=solo",
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
            "--loglevel=ERROR",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        session = finalize_with_webhook(api, receiver.url())
        [first] = receiver.wait_for(1, timeout=30)  # the worker sent it and waits for the answer...
        worker.kill()  # ...and dies before it can record anything
        worker.wait(10)
    finally:
        hold.set()
        if worker.poll() is None:
            worker.kill()
            worker.wait(10)

    delivery = delivery_of(session)
    assert (delivery.status, delivery.attempt_count) == ("pending", 1)
    assert delivery.next_attempt_at > timezone.now() - timedelta(seconds=1)  # the in-flight lease, not due yet
    assert webhook_deliveries_sweep() == 0

    with in_process_worker():
        wait_until(lambda: delivery_of(session).next_attempt_at <= timezone.now(), timeout=5)
        assert webhook_deliveries_sweep() == 1
        first, second = receiver.wait_for(2)
        delivered = wait_until(lambda: WebhookDelivery.objects.filter(pk=delivery.pk, status="delivered").first())

        assert second.headers["webhook-id"] == first.headers["webhook-id"] == delivery.id
        assert second.body == first.body
        Webhook(onboarded.tenant.webhook_secret).verify(second.body, second.headers)
        assert [(a.number, a.status_code, a.error) for a in delivered.attempts.all()] == [
            (1, None, LOST_ATTEMPT_ERROR),
            (2, 200, ""),
        ]
        # Once delivered is recorded, nothing sends it again.
        assert webhook_delivery_attempt(delivery_id=delivery.id) is None
        assert webhook_deliveries_sweep() == 0
        wait_until(tasks_settled)
        assert len(receiver.received) == 2


@pytest.mark.usefixtures("celery_worker")
def test_no_delivery_without_a_notification_url_or_with_webhooks_disabled(api, onboarded, receiver):
    silent = api.create_session()
    finalize_with_webhook(api, receiver.url())  # the control: this one is sent
    receiver.wait_for(1)  # before the switch goes off, which would stop its attempt too
    onboarded.tenant.webhooks_enabled = False
    onboarded.tenant.save(update_fields=["webhooks_enabled"])
    disabled = finalize_with_webhook(api, receiver.url())
    session_cancel(session_id=silent["sessionId"])

    wait_until(tasks_settled)  # the control's tasks have run, and nothing else was queued
    assert len(receiver.received) == 1
    assert not WebhookDelivery.objects.filter(subject_ref__in=[silent["sessionId"], disabled["sessionId"]]).exists()
