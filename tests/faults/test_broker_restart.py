"""Redis restarted empty: what was queued in it is known lost at once, not after the usual waits.

Issue 28: after Redis came back without its data, deliveries handed to drains waited the sweep's requeue
time (60 s) plus a tick, and analyses queued in it came back only through the 15-minute watchdog. The
broker's epoch (core.broker_epoch) tells the sweep and the lost-analyses task that Redis was replaced.
"""

import pytest

from core.redis_client import redis_request_client
from sessions_api.models import VerificationSession
from tests.support.api_client import ApiClient
from tests.support.flow import open_flow, post_selfie
from tests.support.waiting import wait_until
from tests.support.webhooks import finalize_with_webhook
from webhooks.services import webhook_deliveries_sweep

from .test_workers import delivered, no_face

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def test_deliveries_handed_to_drains_in_a_redis_that_restarted_empty_go_out_at_the_next_sweep(
    onboarded, private_redis, https_receiver, start_worker, redis_at
):
    api = ApiClient(onboarded.live_key)
    with redis_at(private_redis.url):
        sessions = [finalize_with_webhook(api, https_receiver.url()) for _ in range(3)]
        assert redis_request_client().keys("webhooks:drains:*"), "a drain was woken for them"
        private_redis.kill()  # no persistence: the drain's task and the drains' set are lost with it
        private_redis.start()
        start_worker("webhooks", private_redis.url, pool="threads", concurrency=4)

        # What beat does every few seconds, with the deployed requeue wait (WEBHOOK_REQUEUE_AFTER_SECONDS, 60 s).
        wait_until(lambda: webhook_deliveries_sweep() >= 0 and delivered(sessions), timeout=15, interval=1)


def test_analyses_queued_in_a_redis_that_restarted_empty_end_as_retakes_at_once(
    api, private_redis, face_path_on, redis_at
):
    from sessions_api.watchdog import MESSAGE_ANALYSIS_LOST, lost_analyses_release

    lost, kept = open_flow(api), open_flow(api)
    with redis_at(private_redis.url):
        post_selfie(lost, no_face)
        private_redis.kill()  # its analysis message, pictures and all, is gone
        private_redis.start()
        post_selfie(kept, no_face)  # queued in the new Redis: a worker will still take it

        assert lost_analyses_release() == 1  # what beat runs every few seconds

    session = VerificationSession.objects.get(pk=lost.session_id)
    assert (session.status, session.selfie_attempts) == ("initiated", 0)  # the pictures were never judged
    assert session.events.last().message == MESSAGE_ANALYSIS_LOST
    assert kept.session.status == "processing"
