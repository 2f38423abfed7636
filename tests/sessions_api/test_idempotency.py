"""Idempotency-Key on POST /v1/sessions (CONTRACT 2): replay for 24 h, 422 on another body, 409 while in flight."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from sessions_api.api import views as api_module
from sessions_api.models import IdempotencyRecord, VerificationSession
from sessions_api.tasks import idempotency_records_purge
from tenants.services import tenant_create
from tests.factories import SETUP
from tests.support.api_client import ApiClient
from tests.support.assertions import assert_problem

BODY = {"subject": "user-42", "age_limit": 18, "callback_url": "https://shop.example.com/ok"}


def _post(client, body=BODY, key="order-1001", **kwargs):
    return client.post("/v1/sessions", body, headers={"Idempotency-Key": key}, **kwargs)


def test_the_same_key_and_body_replays_the_first_response_and_creates_nothing(api):
    first = _post(api)
    replay = _post(api)

    assert first.status_code == replay.status_code == 201
    assert "Idempotent-Replayed" not in first
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.content == first.content
    assert VerificationSession.objects.count() == 1


def test_the_stored_response_keeps_no_session_token_or_flow_link_in_clear(api, onboarded, settings):
    session = _post(api).json()["session"]
    token, link = session["sessionToken"], session["verificationUrl"]

    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM sessions_api_idempotencyrecord")
        stored = repr(cursor.fetchall())
    assert token not in stored and link not in stored and session["signature"] not in stored
    assert _post(api).json()["session"]["sessionToken"] == token  # yet the replay still gives it back

    settings.SECRET_KEY = "another-secret-key"  # the seal cannot be opened without the server's secret
    assert_problem(_post(api), 422, "idempotency_key_reused")
    assert VerificationSession.objects.count() == 1


def test_a_number_that_only_rounds_to_the_first_bodys_is_another_body(api):
    first = api.post("/v1/sessions", raw='{"subject": "user-42", "age_limit": 18.0}', headers={"Idempotency-Key": "k"})
    other = api.post(
        "/v1/sessions",
        raw='{"subject": "user-42", "age_limit": 18.00000000000000001}',
        headers={"Idempotency-Key": "k"},
    )

    assert first.status_code == 201
    assert_problem(other, 422, "idempotency_key_reused")


def test_a_replay_matches_the_body_not_its_formatting(api):
    first = _post(api)
    reformatted = api.post(
        "/v1/sessions",
        raw='{ "callback_url":"https://shop.example.com/ok",\n"age_limit" : 18, "subject":"user-42" }',
        headers={"Idempotency-Key": "order-1001"},
    )

    assert reformatted["Idempotent-Replayed"] == "true"
    assert reformatted.json() == first.json()


def test_the_same_key_with_another_body_is_422_idempotency_key_reused(api):
    first = _post(api)

    response = _post(api, {**BODY, "age_limit": 21})

    assert_problem(response, 422, "idempotency_key_reused")
    assert VerificationSession.objects.count() == 1
    assert _post(api).json() == first.json()  # the first response is still the one replayed


def test_different_keys_create_different_sessions(api):
    first, second = _post(api, key="a"), _post(api, key="b")

    assert first.json()["session"]["sessionId"] != second.json()["session"]["sessionId"]


def test_without_the_header_every_post_creates_a_session(api):
    api.post("/v1/sessions", BODY)
    api.post("/v1/sessions", BODY)

    assert VerificationSession.objects.count() == 2


def test_keys_are_scoped_per_tenant(api, db):
    other = ApiClient(tenant_create(name="Other Shop", actor=SETUP).live_key)

    mine, theirs = _post(api), _post(other)

    assert theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs
    assert mine.json()["session"]["sessionId"] != theirs.json()["session"]["sessionId"]


def test_live_and_test_keys_have_separate_key_spaces(api, sandbox_api):
    # CONTRACT 2: scoped per tenant and mode. The same key and body from both keys are two requests.
    live = _post(api)
    sandbox = _post(sandbox_api)

    assert live.status_code == sandbox.status_code == 201
    assert "Idempotent-Replayed" not in sandbox
    assert (live.json()["session"]["mode"], sandbox.json()["session"]["mode"]) == ("live", "test")
    assert _post(sandbox_api).json() == sandbox.json()
    assert _post(api).json() == live.json()
    assert VerificationSession.objects.count() == 2


def test_a_sandbox_key_reusing_its_own_key_with_another_body_is_422(api, sandbox_api):
    _post(api)
    _post(sandbox_api)

    assert_problem(_post(sandbox_api, {**BODY, "age_limit": 21}), 422, "idempotency_key_reused")


def test_a_key_is_forgotten_after_24_hours(api):
    first = _post(api)
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=24, minutes=1))

    again = _post(api)

    assert again.status_code == 201
    assert "Idempotent-Replayed" not in again
    assert again.json()["session"]["sessionId"] != first.json()["session"]["sessionId"]


def test_a_refused_request_does_not_burn_its_key(api):
    refused = _post(api, {**BODY, "age_limit": 9})
    corrected = _post(api)

    assert refused.status_code == 400
    assert corrected.status_code == 201
    assert "Idempotent-Replayed" not in corrected


def test_an_abandoned_in_progress_key_is_taken_over_after_the_lock_timeout(api, onboarded, settings):
    # A process that died mid-request left its claim behind (its transaction, and so any session, rolled back).
    _post(api)
    VerificationSession.objects.all().delete()
    claimed_at = timezone.now() - settings.IDEMPOTENCY_LOCK_TIMEOUT - timedelta(seconds=1)
    IdempotencyRecord.objects.update(response_status=None, response_body=None, created_at=claimed_at)

    response = _post(api)

    assert response.status_code == 201
    assert "Idempotent-Replayed" not in response
    assert VerificationSession.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_concurrent_duplicate_is_409_idempotency_key_in_use(onboarded, monkeypatch):
    entered, release = threading.Event(), threading.Event()
    real_create = api_module.session_create

    def slow_create(**kwargs):
        entered.set()
        assert release.wait(10), "the test never released the first request"
        return real_create(**kwargs)

    monkeypatch.setattr(api_module, "session_create", slow_create)
    results = {}

    def first_request():
        try:
            results["first"] = _post(ApiClient(onboarded.live_key))
        finally:
            connection.close()

    worker = threading.Thread(target=first_request)
    worker.start()
    try:
        assert entered.wait(10), "the first request never reached session creation"
        duplicate = _post(ApiClient(onboarded.live_key))
    finally:
        release.set()
        worker.join(10)

    assert_problem(duplicate, 409, "idempotency_key_in_use")
    assert results["first"].status_code == 201
    assert VerificationSession.objects.count() == 1
    replay = _post(ApiClient(onboarded.live_key))
    assert replay["Idempotent-Replayed"] == "true"
    assert replay.content == results["first"].content


def test_records_older_than_the_replay_window_are_purged_and_the_key_is_free_again(api):
    body = {"subject": "user-purge", "age_limit": 18}
    first = api.post("/v1/sessions", body, headers={"Idempotency-Key": "purge-me"})
    IdempotencyRecord.objects.filter(key="purge-me").update(created_at=timezone.now() - timedelta(hours=25))

    assert idempotency_records_purge() == 1

    second = api.post("/v1/sessions", body, headers={"Idempotency-Key": "purge-me"})
    assert second.status_code == 201
    assert "Idempotent-Replayed" not in second.headers
    assert second.json()["session"]["sessionId"] != first.json()["session"]["sessionId"]
