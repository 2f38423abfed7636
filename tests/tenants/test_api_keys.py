"""API keys (spec 5, CONTRACT 1-2): the X-API-Key header, 401/403 problems, hashed storage, rotation, last use."""

import hashlib
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from sessions_api.models import new_session_id
from tenants.models import ApiKey
from tenants.services import api_key_generate, api_key_revoke
from tests.factories import SETUP, api_key_last_used
from tests.support.api_client import ApiClient
from tests.support.assertions import assert_problem

BODY = {"subject": "user-42", "age_limit": 18}


def _both_endpoints(client):
    return [client.post("/v1/sessions", BODY), client.get(f"/v1/sessions/{new_session_id()}")]


def test_a_request_without_a_key_is_401_missing_api_key(anonymous_api):
    for response in _both_endpoints(anonymous_api):
        assert_problem(response, 401, "missing_api_key")
        assert response["WWW-Authenticate"] == 'ApiKey header="X-API-Key"'


def test_an_empty_key_is_401_missing_api_key(db):
    for response in _both_endpoints(ApiClient("   ")):
        assert_problem(response, 401, "missing_api_key")


@pytest.mark.parametrize(
    "key",
    [
        "av_live_" + "A" * 40,
        "av_test_" + "A" * 40,
        "sk_live_whatever",
        "av_live_",
        "av_live_short",
        "ü" * 50,
        "Bearer av_live_" + "A" * 40,
    ],
)
def test_an_unknown_key_is_401_invalid_api_key(db, key):
    for response in _both_endpoints(ApiClient(key)):
        assert_problem(response, 401, "invalid_api_key")


def test_a_key_with_a_real_prefix_but_a_wrong_secret_is_401_invalid_api_key(onboarded):
    forged = onboarded.live_key[:-1] + ("A" if onboarded.live_key[-1] != "A" else "B")

    for response in _both_endpoints(ApiClient(forged)):
        assert_problem(response, 401, "invalid_api_key")


def test_an_unknown_prefix_does_the_same_hashing_and_comparing_as_a_wrong_secret(onboarded, monkeypatch):
    # The work, not a clock, is compared: a timing assertion would be flaky, and equal work is what
    # removes the difference the attacker measured (an unknown prefix skipped the hash and the compare).
    from tenants import selectors

    work = []
    real_hash, real_compare = selectors.api_key_hash, selectors.hmac.compare_digest
    monkeypatch.setattr(selectors, "api_key_hash", lambda raw: work.append("hash") or real_hash(raw))
    monkeypatch.setattr(
        selectors.hmac, "compare_digest", lambda a, b: work.append(("compare", len(a), len(b))) or real_compare(a, b)
    )
    forged_secret = onboarded.live_key[:-1] + ("A" if onboarded.live_key[-1] != "A" else "B")
    unknown_prefix = "av_live_" + "Z" * 40

    answers = []
    for key in (forged_secret, unknown_prefix):
        work.clear()
        answers.append(ApiClient(key).get(f"/v1/sessions/{new_session_id()}").status_code)
        answers.append(tuple(work))

    assert answers[0] == answers[2] == 401
    assert answers[1] == answers[3] == ("hash", ("compare", 64, 64))


def test_a_live_key_presented_as_a_test_key_is_refused(onboarded):
    swapped = onboarded.live_key.replace("av_live_", "av_test_", 1)

    assert_problem(ApiClient(swapped).post("/v1/sessions", BODY), 401, "invalid_api_key")


def test_a_revoked_key_fails_at_once(api, onboarded):
    session_id = api.create_session()["sessionId"]
    api_key_revoke(api_key=ApiKey.objects.get(tenant=onboarded.tenant, mode="live"), actor=SETUP)

    assert_problem(api.post("/v1/sessions", BODY), 401, "invalid_api_key")
    assert_problem(api.get(f"/v1/sessions/{session_id}"), 401, "invalid_api_key")


def test_revoking_one_key_leaves_the_tenants_other_keys_working(api, onboarded):
    rotated = api_key_generate(tenant=onboarded.tenant, mode="live", label="rotation", actor=SETUP)
    api_key_revoke(api_key=ApiKey.objects.get(tenant=onboarded.tenant, mode="live", label="default"), actor=SETUP)

    assert ApiClient(rotated.raw_key).post("/v1/sessions", BODY).status_code == 201
    assert ApiClient(onboarded.test_key).post("/v1/sessions", BODY).status_code == 201
    assert api.post("/v1/sessions", BODY).status_code == 401


def test_a_disabled_tenant_is_403_tenant_disabled(api, sandbox_api, onboarded):
    session_id = api.create_session()["sessionId"]
    onboarded.tenant.enabled = False
    onboarded.tenant.save()

    for client in (api, sandbox_api):
        assert_problem(client.post("/v1/sessions", BODY), 403, "tenant_disabled")
        assert_problem(client.get(f"/v1/sessions/{session_id}"), 403, "tenant_disabled")


def test_keys_have_the_contract_format_and_only_their_hash_is_stored(onboarded):
    for raw_key, mode in ((onboarded.live_key, "live"), (onboarded.test_key, "test")):
        assert re.fullmatch(rf"av_{mode}_[A-Za-z0-9_-]{{40}}", raw_key)
        stored = ApiKey.objects.get(tenant=onboarded.tenant, mode=mode)
        assert stored.prefix == raw_key[8:20]
        assert stored.key_hash == hashlib.sha256(raw_key.encode()).hexdigest()
        assert raw_key not in {str(value) for value in stored.__dict__.values()}


def test_last_used_at_is_set_by_a_successful_call(api, onboarded):
    api_key = ApiKey.objects.get(tenant=onboarded.tenant, mode="live")
    assert api_key.last_used_at is None

    api.create_session()

    api_key.refresh_from_db()
    assert timezone.now() - api_key.last_used_at < timedelta(seconds=5)


def test_last_used_at_is_written_at_most_once_a_minute(api, onboarded, monkeypatch):
    api_key = ApiKey.objects.get(tenant=onboarded.tenant, mode="live")
    api.create_session()
    api_key.refresh_from_db()
    first_use = api_key.last_used_at

    api.create_session()
    api.get(f"/v1/sessions/{new_session_id()}")

    api_key.refresh_from_db()
    assert api_key.last_used_at == first_use

    a_minute_ago = timezone.now() - timedelta(seconds=61)
    api_key_last_used(api_key, a_minute_ago)
    # A minute really passes too: a worker decides from the time it last wrote, which it keeps with
    # the key in its authentication cache.
    a_minute_later = timezone.now() + timedelta(seconds=61)
    monkeypatch.setattr(timezone, "now", lambda: a_minute_later)
    api.create_session()

    api_key.refresh_from_db()
    assert api_key.last_used_at > a_minute_ago + timedelta(seconds=60)


def test_a_refused_key_is_not_marked_used(onboarded):
    api_key = ApiKey.objects.get(tenant=onboarded.tenant, mode="live")
    api_key_revoke(api_key=api_key, actor=SETUP)

    ApiClient(onboarded.live_key).post("/v1/sessions", BODY)

    api_key.refresh_from_db()
    assert api_key.last_used_at is None
