"""The token buckets every app uses (core.rate_limit), in the real Redis: a burst, then refusals, then a refill.

The API's own buckets (per tenant and mode, per address without a key) are tested through the API in
tests/sessions_api/test_rate_limit.py; these are what the flow's uploads and the dashboard's buttons take from.
"""

import redis
from django.conf import settings as django_settings

from core.rate_limit import PendingTake, bucket_take


def test_a_bucket_allows_its_burst_then_refuses_with_the_wait(db):
    states = [bucket_take("invite:test", rate=0.5, burst=2) for _ in range(3)]

    assert [state.allowed for state in states] == [True, True, False]
    assert states[2].retry_after == 2
    assert states[2].headers()["RateLimit-Limit"] == "2"


def test_a_bucket_without_a_generation_key_reads_and_writes_no_generation(db):
    state = bucket_take("upload:test", rate=1, burst=5)

    store = redis.Redis.from_url(django_settings.REDIS_URL)
    assert state.generation is None
    assert store.keys() == [b"ratelimit:upload:test"]


def test_a_generation_key_is_read_in_the_same_round_trip_and_set_when_missing(db):
    store = redis.Redis.from_url(django_settings.REDIS_URL)

    first = PendingTake("tenant:test", rate=1, burst=5, generation_key="test:generation").finish()
    store.set("test:generation", "g2")
    second = PendingTake("tenant:test", rate=1, burst=5, generation_key="test:generation").finish()

    assert first.generation.startswith("start-")
    assert second.generation == "g2"


def test_without_redis_the_buckets_live_in_process_memory(settings):
    settings.REDIS_URL = ""
    states = [bucket_take("memory:test", rate=0.001, burst=1) for _ in range(2)]

    assert [state.allowed for state in states] == [True, False]
