"""The webhooks worker's threads share a bounded pool of database connections (DATABASE_POOL_MAX_SIZE).

Issue 28: a webhooks worker with 32 threads held 32 idle PostgreSQL connections, and three such workers passed
PostgreSQL's default `max_connections`.
"""

import pytest
from django.db import connection

from tests.support.api_client import ApiClient
from tests.support.outages import broker_at
from tests.support.receiver import Reply
from tests.support.waiting import wait_until
from tests.support.webhooks import finalize_with_webhook

from .test_workers import delivered

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


WORKER_NAME = "av-pool-test-worker"  # libpq's application_name, from PGAPPNAME in the worker's environment


def other_connections() -> int:
    """Client connections of the worker under test to the test database (other tests' leftovers not counted)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_type = 'client backend' AND application_name = %s",
            [WORKER_NAME],
        )
        return cursor.fetchone()[0]


def test_a_webhooks_worker_with_eight_threads_holds_no_more_connections_than_its_pool(
    onboarded, private_redis, https_receiver, start_worker, settings
):
    settings.WEBHOOK_TENANT_DRAINS = 0  # one task per delivery (no drains), so that eight threads are at work at once
    api = ApiClient(onboarded.live_key)
    https_receiver.script(*[Reply(delay=1.0)] * 8)  # the attempts overlap while the receiver takes its time
    worker = start_worker(
        "webhooks",
        private_redis.url,
        pool="threads",
        concurrency=8,
        extra_env={"DATABASE_POOL_MAX_SIZE": "2", "PGAPPNAME": WORKER_NAME},
    )
    assert other_connections() == 0
    with broker_at(private_redis.url):
        sessions = [finalize_with_webhook(api, https_receiver.url()) for _ in range(8)]
        wait_until(lambda: delivered(sessions), timeout=60, describe=worker.output)
    wait_until(worker.idle, timeout=30, describe=worker.output)

    assert https_receiver.wait_for(8)
    held = other_connections()
    assert held <= 2, f"the worker holds {held} connections"
