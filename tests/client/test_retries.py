"""The Python client against a flaky server: what it retries, how long it waits, and which key it sends.

The server here is a local HTTP server answering from a script (429, 503, dropped connections), as a
proxy or an overloaded service would; the client is used exactly as a partner uses it.
"""

import datetime
import socket
import uuid

import pytest

from ageverify_client import (
    AgeVerify,
    ApiConnectionError,
    ApiError,
    ConflictError,
    RateLimitError,
    ServerError,
)
from tests.support.scripted_server import RESET, TRUNCATED, Answer, ScriptedServer

SESSION = {
    "sessionId": "ses_01KTESTSESSION0000000000000",
    "status": "initiated",
    "subject": "user-42",
    "ageLimit": 18,
    "mode": "test",
    "reason": None,
    "expiresAt": "2026-11-22T11:15:30.123Z",
    "callbackUrl": None,
    "cancelUrl": None,
    "notificationUrl": None,
    "createdAt": "2026-11-22T10:15:30.123Z",
    "updatedAt": "2026-11-22T10:15:30.123Z",
}
CREATED = Answer(
    201, {"session": {**SESSION, "sessionToken": "tok", "signature": "sig", "verificationUrl": "http://x/flow"}}
)
READ = Answer(200, {"session": SESSION, "ageEstimation": None, "liveness": None, "validateDoc": None})


def problem(status: int, code: str, **headers) -> Answer:
    body = {
        "type": f"https://docs.ageverify.dev/errors/{code}",
        "title": "Scripted",
        "status": status,
        "code": code,
        "detail": f"scripted {code}",
        "requestId": "req_scripted",
    }
    return Answer(status, body, {"Content-Type": "application/problem+json", **headers})


@pytest.fixture(scope="module")
def _server():
    server = ScriptedServer()
    yield server
    server.close()


@pytest.fixture
def server(_server):
    _server.reset()
    yield _server
    _server.reset()


@pytest.fixture
def client(server):
    return AgeVerify("av_test_scripted", base_url=server.url, backoff_base=0.01, backoff_max=0.05)


def _keys(server):
    return [seen.headers.get("idempotency-key") for seen in server.requests]


def test_a_create_retried_after_503_and_a_reset_connection_sends_one_idempotency_key(server, client):
    server.script(problem(503, "service_unavailable"), RESET, CREATED)

    created = client.sessions.create(subject="user-42", age_limit=18)

    assert created.session_id == SESSION["sessionId"]
    keys = _keys(server)
    assert len(keys) == 3 and len(set(keys)) == 1
    assert uuid.UUID(keys[0])
    assert [seen.body for seen in server.requests] == [b'{"subject":"user-42","age_limit":18}'] * 3


def test_each_create_call_gets_its_own_key_and_a_given_key_is_sent_as_is(server, client):
    server.script(CREATED, CREATED, CREATED)

    client.sessions.create(subject="a", age_limit=18)
    client.sessions.create(subject="a", age_limit=18)
    client.sessions.create(subject="a", age_limit=18, idempotency_key="order-1234")

    first, second, given = _keys(server)
    assert first != second
    assert given == "order-1234"


def test_a_409_in_progress_is_retried_with_the_same_key(server, client):
    server.script(problem(409, "idempotency_key_in_use"), problem(409, "idempotency_key_in_use"), CREATED)

    assert client.sessions.create(subject="a", age_limit=18).session_id == SESSION["sessionId"]
    assert len(set(_keys(server))) == 1 and len(server.requests) == 3


def test_429_waits_as_long_as_retry_after_says(server, client):
    server.script(problem(429, "rate_limited", **{"Retry-After": "1"}), READ)

    assert client.sessions.get(SESSION["sessionId"]).status == "initiated"

    first, second = server.requests
    assert 0.95 <= second.arrived_at - first.arrived_at < 2


def test_429_without_retry_after_waits_for_ratelimit_reset(server, client):
    server.script(problem(429, "rate_limited", **{"RateLimit-Remaining": "0", "RateLimit-Reset": "1"}), CREATED)

    client.sessions.create(subject="a", age_limit=18)

    first, second = server.requests
    assert 0.95 <= second.arrived_at - first.arrived_at < 2
    assert second.headers["idempotency-key"] == first.headers["idempotency-key"]


def test_a_429_asking_for_longer_than_max_retry_wait_raises_at_once_with_the_wait(server):
    client = AgeVerify("av_test_scripted", base_url=server.url, max_retry_wait=5)
    server.script(problem(429, "rate_limited", **{"Retry-After": "120"}))

    with pytest.raises(RateLimitError) as raised:
        client.sessions.get(SESSION["sessionId"])

    assert raised.value.retry_after == 120
    assert (raised.value.status, raised.value.code, raised.value.request_id) == (429, "rate_limited", "req_scripted")
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "failure",
    [problem(500, "internal"), problem(502, "bad_gateway"), problem(504, "gateway_timeout"), RESET, TRUNCATED],
)
def test_a_get_is_retried_after_a_server_error_or_a_dropped_connection(server, client, failure):
    server.script(failure, READ)

    assert client.sessions.get(SESSION["sessionId"]).session_id == SESSION["sessionId"]
    assert len(server.requests) == 2


def test_retries_stop_after_max_retries_and_the_last_problem_is_raised(server, client):
    server.script(*[problem(503, "service_unavailable", **{"Retry-After": "0"})] * 5)

    with pytest.raises(ServerError) as raised:
        client.sessions.get(SESSION["sessionId"])

    assert len(server.requests) == 4  # the first attempt and max_retries=3
    assert (raised.value.status, raised.value.code, raised.value.detail) == (
        503,
        "service_unavailable",
        "scripted service_unavailable",
    )


def test_a_post_without_idempotency_key_is_not_repeated_after_a_503(server, client):
    server.script(problem(503, "service_unavailable"), READ)

    with pytest.raises(ServerError):
        client.sandbox.advance(SESSION["sessionId"], "approved")
    assert len(server.requests) == 1


def test_a_post_without_idempotency_key_is_not_repeated_after_a_dropped_connection(server, client):
    server.script(RESET, READ)

    with pytest.raises(ApiConnectionError):
        client.sandbox.advance(SESSION["sessionId"], "approved")
    assert len(server.requests) == 1


def test_a_conflict_that_is_not_in_progress_is_raised_at_once(server, client):
    server.script(problem(409, "invalid_transition"))

    with pytest.raises(ConflictError) as raised:
        client.sandbox.advance(SESSION["sessionId"], "approved")
    assert raised.value.code == "invalid_transition" and len(server.requests) == 1


def test_a_refused_connection_is_retried_then_raised():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket is closed
    client = AgeVerify("av_test_x", base_url=f"http://127.0.0.1:{port}", max_retries=2, backoff_base=0.01)

    with pytest.raises(ApiConnectionError, match="3 attempt"):
        client.sessions.get("ses_x")


def test_an_html_error_page_from_a_proxy_still_raises_a_problem(server):
    client = AgeVerify("av_test_scripted", base_url=server.url, max_retries=0)
    server.script(Answer(502, b"<html><body>Bad Gateway</body></html>", {"Content-Type": "text/html"}))

    with pytest.raises(ServerError) as raised:
        client.sessions.get(SESSION["sessionId"])
    assert raised.value.status == 502 and raised.value.title and "Bad Gateway" in raised.value.detail


def test_fields_the_client_does_not_know_yet_are_kept(server, client):
    session = {**SESSION, "status": "approved", "reason": "digital_id", "riskLevel": "low"}
    credential = {"kind": "mdoc", "claim": "age_over_18", "value": True, "issuer": {"country": "UT", "chain": []}}
    server.script(
        Answer(
            200,
            {
                "session": session,
                "ageEstimation": None,
                "liveness": None,
                "validateDoc": None,
                "ageCredential": credential,
                "riskSignals": ["new_device"],
            },
        )
    )

    result = client.sessions.get(SESSION["sessionId"])

    assert result.approved and result.reason == "digital_id"
    assert result.session.extra == {"riskLevel": "low"}
    assert result.extra == {"riskSignals": ["new_device"]}
    assert result.age_credential.issuer.extra == {"chain": []} and result.age_credential.doc_type is None
    assert result.raw["ageCredential"] == credential


def test_a_creation_response_without_client_secret_reads_as_none_and_with_one_exposes_it(server, client):
    with_secret = {"session": {**CREATED.body["session"], "clientSecret": "ses_01KTEST_secret_abc"}}
    server.script(CREATED, Answer(201, with_secret))

    assert client.sessions.create(subject="a", age_limit=18).client_secret is None
    assert client.sessions.create(subject="a", age_limit=18).client_secret == "ses_01KTEST_secret_abc"


def test_cancel_is_retried_like_a_get_since_cancelling_twice_answers_the_same(server, client):
    server.script(problem(503, "service_unavailable"), RESET, READ)

    client.sessions.cancel(SESSION["sessionId"])

    assert [(seen.method, seen.path) for seen in server.requests] == [
        ("POST", f"/v1/sessions/{SESSION['sessionId']}/cancel")
    ] * 3


def test_list_sends_its_filters_as_query_parameters(server, client):
    server.script(Answer(200, {"data": [READ.body], "hasMore": True, "nextCursor": "abc"}))

    page = client.sessions.list(
        status=["approved", "denied"],
        subject="user 42",
        limit=5,
        created_from=datetime.datetime(2026, 11, 22, 10, tzinfo=datetime.UTC),
    )

    assert server.requests[0].path == (
        "/v1/sessions?status=approved%2Cdenied&subject=user+42&created_from=2026-11-22T10%3A00%3A00%2B00%3A00&limit=5"
    )
    assert (page.has_more, page.next_cursor, page.data[0].session_id) == (True, "abc", SESSION["sessionId"])


def test_a_redirect_is_not_followed_and_raises_with_its_status(server):
    server.script(Answer(302, {"title": "Found", "status": 302}, {"Location": "http://evil.example/v1/sessions"}))

    with AgeVerify("av_test_scripted", base_url=server.url) as client, pytest.raises(ApiError) as raised:
        client.sessions.get(SESSION["sessionId"])

    assert raised.value.status == 302 and len(server.requests) == 1
