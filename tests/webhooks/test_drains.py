"""A tenant's new deliveries are sent by a few drains, not one queued task each (webhooks.drains)."""

import json
import time

import pytest
import redis
from django.conf import settings as django_settings

from tenants.services import tenant_create
from tests.factories import SETUP
from tests.support.api_client import ApiClient
from tests.support.webhooks import finalize_with_webhook
from tests.support.workers import in_process_worker
from webhooks.services import webhook_deliveries_sweep

QUEUE = "webhooks"  # the delivery workers' queue: a Redis list on the broker
# How long the receiver waits for what must arrive: each turn commits to PostgreSQL, and CI runs these tests
# beside a container build whose disk writes once held a turn for seconds (1 of 4 arrived in 20 s). Healthy,
# they arrive in well under a second; waiting longer changes nothing else the tests assert.
ARRIVAL_TIMEOUT = 60


@pytest.fixture
def broker(transactional_db):
    """The broker's Redis, its webhooks queue empty, no worker consuming yet."""
    from ageverify.celery import app

    app.control.purge()
    return redis.Redis.from_url(django_settings.REDIS_URL)


def arrival_order(received) -> list[str]:
    return [json.loads(request.body)["data"]["sessionId"] for request in received]


@pytest.mark.parametrize(("drains", "tasks"), [(1, 1), (2, 2), (0, 5)])
def test_a_tenants_new_deliveries_wake_at_most_its_drains_and_all_arrive(
    broker, api, receiver, settings, drains, tasks
):
    settings.WEBHOOK_TENANT_DRAINS = drains
    sessions = [finalize_with_webhook(api, receiver.url()) for _ in range(5)]
    assert broker.llen(QUEUE) == tasks  # 0 drains: each delivery is queued alone, as before drains

    with in_process_worker():
        received = receiver.wait_for(5, timeout=ARRIVAL_TIMEOUT)
    assert sorted(arrival_order(received)) == sorted(session["sessionId"] for session in sessions)
    if drains == 1:  # one drain sends the oldest due delivery first
        assert arrival_order(received) == [session["sessionId"] for session in sessions]


def test_a_drain_goes_back_to_the_end_of_the_queue_after_its_slice(broker, api, receiver, settings):
    settings.WEBHOOK_TENANT_DRAINS = 1
    settings.WEBHOOK_DRAIN_SLICE_SECONDS = 0  # one delivery per turn
    busy = [finalize_with_webhook(api, receiver.url()) for _ in range(3)]
    other = finalize_with_webhook(
        ApiClient(tenant_create(name="Other Shop", webhooks_enabled=True, actor=SETUP).live_key), receiver.url()
    )

    with in_process_worker():  # solo, one task at a time: the order of arrival is the order of turns
        received = receiver.wait_for(4, timeout=ARRIVAL_TIMEOUT)
    assert arrival_order(received) == [
        busy[0]["sessionId"],
        other["sessionId"],
        busy[1]["sessionId"],
        busy[2]["sessionId"],
    ]


def test_with_a_whole_slice_a_drain_sends_its_tenants_backlog_before_the_next_task(broker, api, receiver, settings):
    settings.WEBHOOK_TENANT_DRAINS = 1
    settings.WEBHOOK_DRAIN_SLICE_SECONDS = 30  # longer than three sends on the slowest machine
    busy = [finalize_with_webhook(api, receiver.url()) for _ in range(3)]
    other = finalize_with_webhook(
        ApiClient(tenant_create(name="Other Shop", webhooks_enabled=True, actor=SETUP).live_key), receiver.url()
    )

    with in_process_worker():
        received = receiver.wait_for(4, timeout=ARRIVAL_TIMEOUT)
    assert arrival_order(received) == [session["sessionId"] for session in busy] + [other["sessionId"]]


def test_a_drain_not_seen_for_two_minutes_no_longer_counts(broker, api, onboarded, receiver, settings):
    # A worker killed in the middle of a drain leaves it in the tenant's set of drains at work.
    settings.WEBHOOK_TENANT_DRAINS = 1
    broker.zadd(f"webhooks:drains:{onboarded.tenant.pk}", {"dead-workers-drain": time.time() - 121})
    session = finalize_with_webhook(api, receiver.url())
    assert broker.llen(QUEUE) == 1  # a new drain was woken

    with in_process_worker():
        received = receiver.wait_for(1, timeout=ARRIVAL_TIMEOUT)
    assert arrival_order(received) == [session["sessionId"]]


def test_a_delivery_that_a_drain_at_work_never_takes_is_queued_by_the_sweep(broker, api, onboarded, receiver, settings):
    # The drain counted as at work is gone (its message lost) but not stale yet: the outbox still has the row.
    settings.WEBHOOK_TENANT_DRAINS = 1
    settings.WEBHOOK_REQUEUE_AFTER_SECONDS = 0
    broker.zadd(f"webhooks:drains:{onboarded.tenant.pk}", {"lost-drain": time.time()})
    session = finalize_with_webhook(api, receiver.url())
    assert broker.llen(QUEUE) == 0  # the drain at work was to take it

    assert webhook_deliveries_sweep() == 1
    with in_process_worker():
        received = receiver.wait_for(1, timeout=ARRIVAL_TIMEOUT)
    assert arrival_order(received) == [session["sessionId"]]


def test_a_delivery_written_while_the_drain_is_at_work_is_taken_by_that_drain(broker, api, receiver, settings):
    import threading

    from tests.support.receiver import Reply

    settings.WEBHOOK_TENANT_DRAINS = 1
    release = threading.Event()
    receiver.script(Reply(hold=release))
    first = finalize_with_webhook(api, receiver.url())
    with in_process_worker():
        receiver.wait_for(1, timeout=ARRIVAL_TIMEOUT)  # the drain is sending the first one, its answer held
        second = finalize_with_webhook(api, receiver.url())
        assert broker.llen(QUEUE) == 0  # no other drain was woken: the one at work takes it next
        release.set()
        received = receiver.wait_for(2, timeout=ARRIVAL_TIMEOUT)
    assert arrival_order(received) == [first["sessionId"], second["sessionId"]]
