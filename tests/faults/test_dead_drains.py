"""A webhooks worker SIGKILLed while its drains were at work: the tenant's deliveries go on at once (issue 45).

A drain at work is counted in Redis until it is stale (webhooks.drains: DRAIN_STALE_SECONDS, 120 s). The killed
worker's drains stayed counted that long, so no new drain started for the tenant and every delivery, new ones
included, waited for the sweep. A worker's drains are now released as soon as the worker is known dead.
"""

import threading
import time

import pytest

from tests.support.api_client import ApiClient
from tests.support.receiver import Reply
from tests.support.waiting import wait_until
from tests.support.webhooks import finalize_with_webhook
from webhooks.services import webhook_deliveries_sweep

from .test_workers import delivered

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def test_after_a_webhooks_worker_is_killed_new_and_waiting_deliveries_go_out_within_seconds(
    onboarded, private_redis, https_receiver, start_worker, redis_at, settings
):
    settings.WEBHOOK_TENANT_DRAINS = 2
    api = ApiClient(onboarded.live_key)
    held = threading.Event()
    https_receiver.script(Reply(hold=held), Reply(hold=held))  # both drains hang on their first attempt
    worker = start_worker(
        "webhooks", private_redis.url, pool="threads", concurrency=4, extra_env={"WEBHOOK_TENANT_DRAINS": "2"}
    )
    try:
        with redis_at(private_redis.url):
            for _ in range(2):
                finalize_with_webhook(api, https_receiver.url())
            https_receiver.wait_for(2)  # both drains are at work, each on an attempt that hangs
            waiting = [finalize_with_webhook(api, https_receiver.url()) for _ in range(2)]  # behind the two drains
            worker.kill()
            held.set()
            worker.start()
            back = time.monotonic()
            new = [finalize_with_webhook(api, https_receiver.url()) for _ in range(2)]

            # What beat does every 5 s; the deliveries' own requeue wait (60 s) is far longer than the 10 s allowed.
            wait_until(lambda: webhook_deliveries_sweep() >= 0 and delivered(waiting + new), timeout=10, interval=1)
            print(f"the waiting and new deliveries went out {time.monotonic() - back:.1f} s after the restart")
    finally:
        held.set()
