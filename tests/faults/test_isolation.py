"""One party's trouble stays its own: a hanging receiver and a frozen Redis, with real worker and web processes."""

import threading
import time

import pytest
import requests

from tenants.services import tenant_create
from tests.factories import SETUP
from tests.support.api_client import ApiClient
from tests.support.outages import broker_at
from tests.support.receiver import Reply
from tests.support.webhooks import finalize_with_webhook

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def test_a_hanging_receiver_does_not_delay_another_tenants_first_attempt(
    onboarded, private_redis, https_receivers, start_worker
):
    hanging, healthy = https_receivers(), https_receivers()
    release = threading.Event()
    hanging.script(Reply(hold=release), Reply(hold=release))
    other = tenant_create(name="Healthy Co", webhooks_enabled=True, actor=SETUP)
    start_worker("webhooks", private_redis.url, pool="threads", concurrency=32)  # as the README runs it

    try:
        with broker_at(private_redis.url):
            for _ in range(2):
                finalize_with_webhook(ApiClient(onboarded.live_key), hanging.url())
            hanging.wait_for(2)  # two attempts now hang on the receiver
            started = time.time()
            finalize_with_webhook(ApiClient(other.live_key), healthy.url())
            first_attempt = healthy.wait_for(1, timeout=15)[0]
    finally:
        release.set()

    assert first_attempt.arrived_at - started < 1.0


def test_a_frozen_redis_costs_each_api_call_no_more_than_the_redis_timeout(onboarded, private_redis, start_web):
    web = start_web(
        private_redis.url,
        extra_env={
            "WEBHOOK_ALLOW_PRIVATE_TARGETS": "1",
            "REDIS_REQUEST_TIMEOUT": "0.5",
            "REDIS_OUTAGE_BACKOFF_SECONDS": "5",
        },
    )
    http = requests.Session()
    http.headers["X-API-Key"] = onboarded.test_key

    def session_round() -> list[float]:
        """Create, finalize (which queues a webhook) and read one session; the seconds each call took."""
        timings = []
        started = time.monotonic()
        created = http.post(
            web.url("/v1/sessions"),
            timeout=30,
            json={"subject": "user-42", "age_limit": 18, "notification_url": "https://127.0.0.1:9/hooks"},
        )
        timings.append(time.monotonic() - started)
        assert created.status_code == 201, created.text
        session_id = created.json()["session"]["sessionId"]
        started = time.monotonic()
        advanced = http.post(web.url(f"/v1/test/sessions/{session_id}/advance"), json={"to": "approved"}, timeout=30)
        timings.append(time.monotonic() - started)
        assert advanced.status_code == 200, advanced.text
        started = time.monotonic()
        read = http.get(web.url(f"/v1/sessions/{session_id}"), timeout=30)
        timings.append(time.monotonic() - started)
        assert read.json()["session"]["status"] == "approved"
        return timings

    session_round()  # warm: connections to the database and to Redis are open
    private_redis.freeze()
    try:
        frozen = session_round() + session_round()
    finally:
        private_redis.thaw()

    # The first call waits for one Redis timeout (0.5 s); after it, calls skip Redis for a few seconds.
    print(f"API calls with Redis frozen: max {max(frozen):.2f} s, all {[round(t, 2) for t in frozen]}")
    assert max(frozen) < 1.0
