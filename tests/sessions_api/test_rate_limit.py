"""Rate limits in the real Redis (CONTRACT 2): per tenant and mode, per address without a valid key: 429."""

import time

import pytest
import redis
from django.conf import settings as django_settings

from core import rate_limit
from sessions_api.models import VerificationSession, new_session_id
from tests.factories import SETUP, ApiKeyFactory
from tests.support.api_client import ApiClient
from tests.support.assertions import assert_problem


@pytest.fixture
def limited(onboarded):
    """The tenant's keys may make 3 requests at once, then 1 per second."""
    onboarded.tenant.rate_limit_per_second = 1
    onboarded.tenant.rate_limit_burst = 3
    onboarded.tenant.save()
    return onboarded


def _read(client, session_id):
    return client.get(f"/v1/sessions/{session_id}")


def test_a_key_gets_its_burst_then_429_with_retry_after(limited):
    client = ApiClient(limited.live_key)
    session_id = new_session_id()

    answers = [_read(client, session_id) for _ in range(3)]
    refused = _read(client, session_id)

    assert [answer.status_code for answer in answers] == [404, 404, 404]
    assert [answer["RateLimit-Limit"] for answer in answers] == ["3", "3", "3"]
    assert [answer["RateLimit-Remaining"] for answer in answers] == ["2", "1", "0"]
    assert_problem(refused, 429, "rate_limited")
    assert refused["Retry-After"] == "1"
    assert refused["RateLimit-Limit"] == "3"
    assert refused["RateLimit-Remaining"] == "0"
    assert 1 <= int(refused["RateLimit-Reset"]) <= 3


def test_the_bucket_lives_in_redis(limited):
    client = ApiClient(limited.live_key)
    _read(client, new_session_id())

    store = redis.Redis.from_url(django_settings.REDIS_URL)
    key = f"ratelimit:tenant:{limited.tenant.pk}:live"
    assert float(store.hget(key, "tokens")) == pytest.approx(2, abs=0.1)
    assert 0 < store.pttl(key) <= 4000


def test_a_rate_limited_post_creates_no_session(limited):
    client = ApiClient(limited.live_key)
    for _ in range(3):
        client.create_session()

    refused = client.post("/v1/sessions", {"subject": "user-42", "age_limit": 18})

    assert_problem(refused, 429, "rate_limited")
    assert VerificationSession.objects.count() == 3


def test_the_keys_of_one_tenant_share_one_bucket(limited):
    # Generating more keys must not multiply the tenant's limit.
    first = ApiClient(limited.live_key)
    second = ApiClient(ApiKeyFactory(tenant=limited.tenant, label="second").raw_key)
    for _ in range(3):
        _read(first, new_session_id())
    assert _read(first, new_session_id()).status_code == 429

    assert_problem(_read(second, new_session_id()), 429, "rate_limited")


def test_sandbox_traffic_has_its_own_bucket_and_cannot_starve_live_calls(limited):
    live, sandbox = ApiClient(limited.live_key), ApiClient(limited.test_key)
    for _ in range(3):
        _read(sandbox, new_session_id())
    assert _read(sandbox, new_session_id()).status_code == 429

    assert _read(live, new_session_id()).status_code == 404


def test_the_bucket_refills_at_the_tenants_rate(onboarded):
    onboarded.tenant.rate_limit_per_second = 5
    onboarded.tenant.rate_limit_burst = 1
    onboarded.tenant.save()
    client = ApiClient(onboarded.live_key)

    assert _read(client, new_session_id()).status_code == 404
    assert _read(client, new_session_id()).status_code == 429
    time.sleep(0.25)

    assert _read(client, new_session_id()).status_code == 404


def test_without_an_override_the_service_default_applies(api):
    answer = _read(api, new_session_id())

    assert answer["RateLimit-Limit"] == str(django_settings.API_RATE_LIMIT_BURST)
    assert answer["RateLimit-Remaining"] == str(django_settings.API_RATE_LIMIT_BURST - 1)
    assert answer["RateLimit-Reset"] == "1"


@pytest.mark.parametrize("key", [None, "av_live_nonsense", "not-a-key"])
def test_requests_without_a_valid_key_are_limited_per_client_address(settings, db, key):
    settings.API_UNAUTHENTICATED_RATE_PER_SECOND = 1
    settings.API_UNAUTHENTICATED_BURST = 3
    client = ApiClient(key)
    answers = [_read(client, new_session_id()) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [401, 401, 401]

    refused = _read(client, new_session_id())

    assert_problem(refused, 429, "rate_limited")
    assert int(refused["Retry-After"]) >= 1
    other_address = client.client.get(
        f"/v1/sessions/{new_session_id()}", REMOTE_ADDR="198.51.100.7", headers=client._headers(None)
    )
    assert other_address.status_code == 401


def test_the_limiter_fails_open_when_redis_is_unreachable(api, settings, caplog):
    rate_limit._redis_client.cache_clear()
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        answers = [_read(api, new_session_id()) for _ in range(3)]
    finally:
        rate_limit._redis_client.cache_clear()

    assert [answer.status_code for answer in answers] == [404, 404, 404]
    assert "RateLimit-Limit" not in answers[0]
    assert "rate limiter unavailable" in caplog.text


@pytest.mark.parametrize("body", [{"subject": "", "age_limit": 25}, "{not json"])
def test_a_refused_post_is_a_429_whatever_its_body(limited, body):
    # The body is checked while the limiter's answer travels; the limiter's refusal still decides the answer.
    client = ApiClient(limited.live_key)
    for _ in range(3):
        client.create_session()

    if isinstance(body, str):
        refused = client.post("/v1/sessions", raw=body)
    else:
        refused = client.post("/v1/sessions", body)

    assert_problem(refused, 429, "rate_limited")
    assert refused["RateLimit-Remaining"] == "0"


def test_a_post_refused_for_a_revoked_key_creates_nothing_even_from_the_key_cache(onboarded):
    from tenants.models import ApiKey
    from tenants.services import api_key_revoke

    client = ApiClient(onboarded.live_key)
    client.create_session()  # the key is now in this process's cache
    api_key_revoke(api_key=ApiKey.objects.get(tenant=onboarded.tenant, mode="live"), actor=SETUP)

    refused = client.post("/v1/sessions", {"subject": "after-revocation", "age_limit": 18})

    assert_problem(refused, 401, "invalid_api_key")
    assert not VerificationSession.objects.filter(subject="after-revocation").exists()
