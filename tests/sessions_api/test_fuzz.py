"""Property: whatever body reaches POST /v1/sessions, the answer is a 201 or an RFC 9457 4xx, never a 5xx."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.api_bodies import bodies, near_valid_bodies
from tests.support.assertions import assert_problem

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _assert_created_or_client_error(response):
    if response.status_code == 201:
        assert response.json()["session"]["status"] == "initiated"
        return
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    body = assert_problem(response, response.status_code, json.loads(response.content)["code"])
    assert body["code"] in {"malformed_json", "validation_error", "payload_too_large", "rate_limited"}


@FUZZ
@given(body=bodies)
def test_any_json_body_gets_a_201_or_a_problem_4xx(api, body):
    _assert_created_or_client_error(api.post("/v1/sessions", raw=json.dumps(body)))


@FUZZ
@given(body=near_valid_bodies, key=st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=20))
def test_any_json_body_with_an_idempotency_key_gets_a_201_or_a_problem_4xx(api, body, key):
    response = api.post("/v1/sessions", raw=json.dumps(body), headers={"Idempotency-Key": key})

    if response.status_code == 422:
        assert_problem(response, 422, "idempotency_key_reused")
    else:
        _assert_created_or_client_error(response)


@FUZZ
# An empty body is covered in test_errors.py (the test client drops its Content-Type).
@given(
    raw=st.binary(min_size=1, max_size=300)
    | st.binary(max_size=40).map(lambda tail: b'{"subject": "u", "age_limit": ' + tail)
)
def test_any_bytes_get_a_201_or_a_problem_4xx(api, raw):
    _assert_created_or_client_error(api.post("/v1/sessions", raw=raw))
