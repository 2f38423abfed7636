"""A delivery worker with a thread pool: one tenant's hanging receiver holds only its share of the threads."""

import json
import threading

import pytest

from tenants.services import tenant_create
from tests.factories import SETUP
from tests.support.api_client import ApiClient
from tests.support.receiver import Reply, WebhookReceiver
from tests.support.webhooks import finalize_with_webhook
from tests.support.workers import in_process_worker


@pytest.fixture
def threaded_worker(transactional_db):
    """A real Celery worker with four threads, as the delivery workers run (smaller), on the real broker."""
    from ageverify.celery import app

    app.control.purge()
    with in_process_worker(pool="threads", concurrency=4) as worker:
        yield worker


@pytest.fixture
def hanging_receiver(tls_files):
    """A second receiver whose answers wait until the test lets them go."""
    release = threading.Event()
    server = WebhookReceiver(tls_files)
    server.release = release
    yield server
    release.set()
    server.close()


def test_a_hanging_receiver_holds_only_its_tenants_share_of_a_worker(
    receiver, hanging_receiver, threaded_worker, settings
):
    settings.WEBHOOK_TENANT_MAX_IN_FLIGHT = 2
    settings.WEBHOOK_TOTAL_TIMEOUT = 60  # every attempt to the hanging receiver stays open while it hangs
    hanging_receiver.script(*[Reply(hold=hanging_receiver.release)] * 6)
    slow = ApiClient(tenant_create(name="Slow Receiver Ltd", webhooks_enabled=True, actor=SETUP).live_key)
    for _ in range(6):  # more than the worker has threads
        finalize_with_webhook(slow, hanging_receiver.url())
    hanging_receiver.wait_for(2, timeout=20)

    healthy = finalize_with_webhook(
        ApiClient(tenant_create(name="Healthy Shop", webhooks_enabled=True, actor=SETUP).live_key), receiver.url()
    )

    arrived = receiver.wait_for(1, timeout=20)  # while the other tenant's receiver still hangs
    assert json.loads(arrived[0].body)["data"]["sessionId"] == healthy["sessionId"]
    assert len(hanging_receiver.received) == 2  # its share; the rest waited their turn on the queue
    hanging_receiver.release.set()
    hanging_receiver.wait_for(6, timeout=60)  # and nothing was lost: each of them is delivered after all


def test_a_tenant_alone_borrows_idle_threads_but_leaves_one_share_free_for_the_others(
    receiver, hanging_receiver, threaded_worker, settings
):
    settings.WEBHOOK_TENANT_MAX_IN_FLIGHT = 1
    settings.WEBHOOK_TOTAL_TIMEOUT = 60
    hanging_receiver.script(*[Reply(hold=hanging_receiver.release)] * 5)
    busy = ApiClient(tenant_create(name="Busy Receiver Ltd", webhooks_enabled=True, actor=SETUP).live_key)
    for _ in range(5):
        finalize_with_webhook(busy, hanging_receiver.url())
    hanging_receiver.wait_for(3, timeout=20)  # its share of 1, and 2 idle threads borrowed

    healthy = finalize_with_webhook(
        ApiClient(tenant_create(name="Healthy Shop", webhooks_enabled=True, actor=SETUP).live_key), receiver.url()
    )

    arrived = receiver.wait_for(1, timeout=20)  # the last free thread was left for another tenant
    assert json.loads(arrived[0].body)["data"]["sessionId"] == healthy["sessionId"]
    assert len(hanging_receiver.received) == 3  # the worker's 4 threads less one share
    hanging_receiver.release.set()
    hanging_receiver.wait_for(5, timeout=60)
