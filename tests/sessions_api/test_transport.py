"""What reaches the API below JSON: bodies without Content-Length (chunked) and header bytes no key can hold."""

import io
import json

import pytest

from sessions_api.models import VerificationSession
from tests.support.assertions import assert_problem

VALID = {"subject": "user-42", "age_limit": 18}


def post_chunked(api, raw: bytes, *, server_dechunks: bool = True):
    """A POST as a WSGI server hands over a `Transfer-Encoding: chunked` body: no CONTENT_LENGTH at all.

    gunicorn (and mod_wsgi, uWSGI) de-chunk the body and say so with `wsgi.input_terminated`.
    """
    environ = {"CONTENT_TYPE": "application/json", "HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input": io.BytesIO(raw)}
    if server_dechunks:
        environ["wsgi.input_terminated"] = True
    headers = {"X-API-Key": api.api_key} if api.api_key else {}
    return api.client.generic("POST", "/v1/sessions", headers=headers, **environ)


def test_a_chunked_body_is_read_like_any_other(api):
    response = post_chunked(api, json.dumps(VALID).encode())

    assert response.status_code == 201, response.content
    assert response.json()["session"]["subject"] == "user-42"


def test_a_chunked_body_over_16_kib_is_413_payload_too_large(api):
    raw = json.dumps({**VALID, "padding": "x" * 64 * 1024}).encode()

    assert_problem(post_chunked(api, raw), 413, "payload_too_large")
    assert not VerificationSession.objects.exists()


def test_a_chunked_body_on_a_server_that_cannot_dechunk_is_411_not_an_empty_body(api):
    response = post_chunked(api, json.dumps(VALID).encode(), server_dechunks=False)

    assert_problem(response, 411, "length_required")


def test_a_chunked_body_needs_a_key_first(anonymous_api):
    response = post_chunked(anonymous_api, json.dumps(VALID).encode())

    assert_problem(response, 401, "missing_api_key")


@pytest.mark.parametrize("key", ["av_live_" + "\x00" * 40, "av_test_" + "\x00" * 12 + "a" * 28, "av_live_é" + "a" * 39])
def test_a_key_with_bytes_no_key_can_hold_is_401_not_a_500(anonymous_api, key):
    # PostgreSQL refuses NUL in text; gunicorn refuses it in headers, but not every server in front does.
    response = anonymous_api.get("/v1/sessions/ses_01M80VY29XR13AE747AACXPD2P", headers={"X-API-Key": key})

    assert_problem(response, 401, "invalid_api_key")
