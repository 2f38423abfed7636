"""Redis restarted under a running web service and webhooks worker: deliveries go on within seconds (issue 45).

The web process keeps connections to the old Redis. The first use of each, possibly long after the restart,
found it broken and counted that as an outage, which the host's processes share (core.redis_outage): for
REDIS_OUTAGE_BACKOFF_SECONDS no process woke a drain or queued a delivery, and the next stale connection then
started it again. A connection found broken is the connection's problem: it is opened again and the call is tried
once more before anything counts as an outage.
"""

import time

import pytest
import requests

from tests.support.outages import broker_at

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def test_after_redis_restarts_every_new_webhook_arrives_within_seconds(
    onboarded, private_redis, https_receiver, start_web, start_worker
):
    web = start_web(
        private_redis.url,
        extra_env={"WEBHOOK_ALLOW_PRIVATE_TARGETS": "1", "REDIS_OUTAGE_BACKOFF_SECONDS": "5"},
    )
    start_worker("webhooks", private_redis.url, pool="threads", concurrency=4)
    http = requests.Session()
    http.headers["X-API-Key"] = onboarded.test_key

    def approved_session() -> float:
        """Create and approve a sandbox session through the web service; when its approval was answered."""
        created = http.post(
            web.url("/v1/sessions"),
            json={"subject": "user-42", "age_limit": 18, "notification_url": https_receiver.url()},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        session_id = created.json()["session"]["sessionId"]
        advanced = http.post(web.url(f"/v1/test/sessions/{session_id}/advance"), json={"to": "approved"}, timeout=30)
        assert advanced.status_code == 200, advanced.text
        return time.time()

    with broker_at(private_redis.url):
        # Warm: each of the web process's threads has used its connections to Redis.
        for _ in range(4):
            approved_session()
        https_receiver.wait_for(4, timeout=30)

        private_redis.kill()
        private_redis.start()  # empty, as a restarted Redis without persistence is
        time.sleep(2)  # the web process uses its old connections only later, at its next request

        sent = [approved_session() for _ in range(6)]
        arrivals = https_receiver.wait_for(10, timeout=30)[4:]

    delays = sorted(arrival.arrived_at for arrival in arrivals)
    waited = [round(arrived - at, 2) for arrived, at in zip(delays, sent, strict=True)]
    print(f"webhook delays after the Redis restart: {waited} s")
    assert max(waited) < 10, waited
