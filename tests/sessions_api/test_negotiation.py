"""The answer does not depend on how a client asks for JSON (no Accept, */*, application/json, a list).

Requests that ask plainly are served by the API's lean path, the others by DRF's negotiation: the two
must give the same status, body and headers, errors included; anything but JSON is a 406 problem.
"""

import json

import pytest

from sessions_api.models import new_session_id
from tests.support.api_client import ApiClient
from tests.support.assertions import assert_problem

PLAIN = [None, "*/*", "application/json"]  # what partners send
NEGOTIATED = "application/json, text/plain;q=0.5"  # the same request, through DRF's negotiation
VARYING = {"RateLimit-Remaining", "RateLimit-Reset"}  # the bucket drains between the two requests


def _accept(value):
    return {} if value is None else {"Accept": value}


def _same_answer(first, second, *, same_body=True):
    assert first.status_code == second.status_code, (first.content, second.content)
    first_headers = {name: value for name, value in first.items() if name not in VARYING}
    second_headers = {name: value for name, value in second.items() if name not in VARYING}
    assert first_headers == second_headers
    assert first.has_header("RateLimit-Remaining") or first.status_code in (401, 403)
    if same_body:
        assert first.content == second.content
    else:
        assert json.loads(first.content).keys() == json.loads(second.content).keys()


REQUESTS = {
    "unknown session": ("get", lambda sid: f"/v1/sessions/{new_session_id()}", None, {}),
    "malformed id": ("get", lambda sid: "/v1/sessions/nope", None, {}),
    "read": ("get", lambda sid: f"/v1/sessions/{sid}", None, {}),
    "invalid body": ("post", lambda sid: "/v1/sessions", {"subject": "", "age_limit": 25, "extra": 1}, {}),
    "malformed JSON": ("post", lambda sid: "/v1/sessions", "{not json", {}),
    "bad idempotency key": (
        "post",
        lambda sid: "/v1/sessions",
        {"subject": "u", "age_limit": 18},
        {"Idempotency-Key": ""},
    ),
}


@pytest.mark.parametrize("accept", PLAIN)
@pytest.mark.parametrize("name", REQUESTS)
def test_plain_and_negotiated_requests_get_the_same_answer(api, accept, name):
    method, path, body, headers = REQUESTS[name]
    session_id = api.create_session()["sessionId"]
    answers = []
    for asked in (accept, NEGOTIATED):
        all_headers = {"X-Request-Id": "req-negotiation", **headers, **_accept(asked)}
        if method == "get":
            answers.append(api.get(path(session_id), headers=all_headers))
        elif isinstance(body, str):
            answers.append(api.post(path(session_id), raw=body, headers=all_headers))
        else:
            answers.append(api.post(path(session_id), body, headers=all_headers))
    _same_answer(*answers)


@pytest.mark.parametrize("accept", PLAIN)
def test_a_creation_and_its_replay_are_the_same_whichever_path_serves_them(api, accept):
    body = {"subject": "user-42", "age_limit": 18, "callback_url": "https://shop.example.com/ok"}
    key = {"Idempotency-Key": f"order-{accept}", "X-Request-Id": "req-negotiation"}
    created = api.post("/v1/sessions", body, headers={**key, **_accept(accept)})
    replayed = api.post("/v1/sessions", body, headers={**key, "Accept": NEGOTIATED})
    fresh = api.post("/v1/sessions", body, headers={"X-Request-Id": "req-negotiation", "Accept": NEGOTIATED})

    assert created.status_code == 201
    assert replayed["Idempotent-Replayed"] == "true"
    assert replayed.content == created.content
    _same_answer(created, fresh, same_body=False)


@pytest.mark.parametrize("key", ["missing", "unknown"])
def test_authentication_errors_are_the_same_on_both_paths(onboarded, key):
    client = ApiClient(None if key == "missing" else "av_live_" + "x" * 40)
    answers = [
        client.get(f"/v1/sessions/{new_session_id()}", headers={"X-Request-Id": "req-negotiation", **_accept(asked)})
        for asked in ("application/json", NEGOTIATED)
    ]
    assert_problem(answers[0], 401, f"{key == 'missing' and 'missing' or 'invalid'}_api_key")
    _same_answer(*answers)


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_client_that_accepts_no_json_gets_406(api, method):
    if method == "get":
        response = api.get(f"/v1/sessions/{new_session_id()}", headers={"Accept": "text/html"})
    else:
        response = api.post("/v1/sessions", {"subject": "u", "age_limit": 18}, headers={"Accept": "text/html"})

    assert_problem(response, 406, "not_acceptable")
