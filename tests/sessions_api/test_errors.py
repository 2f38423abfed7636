"""Every row of CONTRACT 2's error table as RFC 9457 problem details, and never an HTML page under /v1/.

The key rows (401, 403) are in tests/tenants/test_api_keys.py, 429 in test_rate_limit.py, 503 in
tests/faults/test_database_down.py.
"""

import json
import logging

import pytest
from django.http import HttpResponse, HttpResponseForbidden
from django.urls import include, path
from django.views.decorators.http import require_GET

from sessions_api.models import VerificationSession, new_session_id
from tests.support.assertions import assert_problem, assert_validation_error, field_errors

VALID = {"subject": "user-42", "age_limit": 18}


def _boom(request):
    raise RuntimeError("secret internals that must not leak")


def _plain_ok(request):
    return HttpResponse("ok")


def _plain_forbidden(request):
    return HttpResponseForbidden("<h1>Forbidden</h1>")


# Used by the tests marked `urls(__name__)`: the real routes plus plain Django views under /v1/.
urlpatterns = [
    path("v1/_boom", _boom),
    path("v1/_plain", require_GET(_plain_ok)),
    path("v1/_forbidden", _plain_forbidden),
    path("", include("ageverify.urls")),
]


# --- 400 malformed_json ---


@pytest.mark.parametrize(
    "raw",
    [
        '{"subject": "u", "age_limit": 18',
        "{'subject': 'u'}",
        "   ",
        '{"age_limit": NaN, "subject": "u"}',
        '{"age_limit": Infinity}',
        b"\xff\xfe{}",
        "\ufeff{}",
        "[" * 8000 + "]" * 8000,
    ],
    ids=["truncated", "single-quotes", "blank", "nan", "infinity", "invalid-utf8", "bom", "deep-nesting"],
)
def test_a_body_that_is_not_json_is_400_malformed_json(api, raw):
    assert_problem(api.post("/v1/sessions", raw=raw), 400, "malformed_json")


def test_an_empty_body_declared_json_is_400_malformed_json(api):
    # The test client drops Content-Type from an empty body, so it is set on the WSGI environ directly.
    response = api.client.post(
        "/v1/sessions",
        data=b"",
        content_type="application/json",
        CONTENT_TYPE="application/json",
        headers={"X-API-Key": api.api_key},
    )

    assert_problem(response, 400, "malformed_json")


@pytest.mark.parametrize("raw", ["[]", '["subject", "age_limit"]', '"user-42"', "18", "null", "true"])
def test_json_that_is_not_an_object_is_400_malformed_json(api, raw):
    assert_problem(api.post("/v1/sessions", raw=raw), 400, "malformed_json")


# --- 400 validation_error ---


def test_an_empty_object_reports_both_required_fields(api):
    body = assert_problem(api.post("/v1/sessions", {}), 400, "validation_error")

    assert field_errors(body) == {"subject": "required", "age_limit": "required"}


@pytest.mark.parametrize("missing", ["subject", "age_limit"])
def test_a_missing_required_field_is_code_required(api, missing):
    body = {name: value for name, value in VALID.items() if name != missing}

    assert_validation_error(api.post("/v1/sessions", body), missing, "required")


@pytest.mark.parametrize("value", ["18", True, False, None, 18.5, [18], {"value": 18}, ""])
def test_age_limit_of_a_wrong_type_is_invalid_type(api, value):
    assert_validation_error(api.post("/v1/sessions", {**VALID, "age_limit": value}), "age_limit", "invalid_type")


@pytest.mark.parametrize("value", [9, 22, 0, -18, 9.0, 10**30])
def test_age_limit_outside_10_to_21_is_out_of_range(api, value):
    body = assert_validation_error(api.post("/v1/sessions", {**VALID, "age_limit": value}), "age_limit", "out_of_range")

    assert body["detail"] == "age_limit must be between 10 and 21"


@pytest.mark.parametrize("raw_number", ["1e400", "1" + "0" * 5000, "-1e400"])
def test_age_limit_too_large_for_a_float_or_an_int_is_out_of_range_not_crashed(api, raw_number):
    response = api.post("/v1/sessions", raw=f'{{"subject": "u", "age_limit": {raw_number}}}')

    assert_validation_error(response, "age_limit", "out_of_range")


@pytest.mark.parametrize("raw_number", ["18.0000000001", "18.00000000000000001", "17.99999999999999999"])
def test_age_limit_a_hair_off_an_integer_is_refused_even_past_float_precision(api, raw_number):
    response = api.post("/v1/sessions", raw=f'{{"subject": "u", "age_limit": {raw_number}}}')

    assert_validation_error(response, "age_limit", "invalid_type")
    assert not VerificationSession.objects.exists()


@pytest.mark.parametrize(
    "raw",
    [
        '{"subject": "u", "age_limit": 30, "age_limit": 18}',
        '{"subject": "u", "age_limit": 18, "callback_url": {"a": 1, "a": 2}}',
    ],
)
def test_a_body_with_a_duplicate_key_is_malformed_json_not_last_one_wins(api, raw):
    # Two parsers (a partner's gateway and ours) could read different values out of such a body.
    body = assert_problem(api.post("/v1/sessions", raw=raw), 400, "malformed_json")

    assert "duplicate" in body["detail"]
    assert not VerificationSession.objects.exists()


@pytest.mark.parametrize("value", [42, None, ["user"], {"id": 1}, True])
def test_subject_of_a_wrong_type_is_invalid_type(api, value):
    assert_validation_error(api.post("/v1/sessions", {**VALID, "subject": value}), "subject", "invalid_type")


@pytest.mark.parametrize("value", ["", "x" * 256])
def test_subject_empty_or_longer_than_255_is_out_of_range(api, value):
    assert_validation_error(api.post("/v1/sessions", {**VALID, "subject": value}), "subject", "out_of_range")


@pytest.mark.parametrize("raw_subject", ["a\\u0000b", "line\\nbreak", "bell\\u0007", "lone\\ud800surrogate"])
def test_subject_with_control_characters_or_lone_surrogates_is_refused(api, raw_subject):
    response = api.post("/v1/sessions", raw=f'{{"subject": "{raw_subject}", "age_limit": 18}}')

    assert_validation_error(response, "subject", "invalid_value")
    assert not VerificationSession.objects.exists()


@pytest.mark.parametrize(
    "subject",
    [
        "admin\u202egnp.exe",
        "\u2067alice\u2069",
        "ali\u200bce",
        "bob\u200d",
        "\ufeffcarol",
        "dave\u2060",
        "eve\u200e",
        "mallory\u061c",
    ],
)
def test_subject_with_bidi_or_zero_width_characters_is_refused(api, subject):
    # Such a subject can display in the dashboard as another user's id.
    assert_validation_error(api.post("/v1/sessions", {**VALID, "subject": subject}), "subject", "invalid_value")
    assert not VerificationSession.objects.exists()


@pytest.mark.parametrize("field", ["callback_url", "cancel_url", "notification_url"])
@pytest.mark.parametrize(
    "url",
    [
        "https://shop.example.com/\u202ekcabllac",
        "https://shop.example.com/a\u200bb",
        "https://shop.example.com:99999/done",
        "https://shop.example.com:0/done",
    ],
)
def test_urls_with_invisible_characters_or_an_impossible_port_are_refused(api, field, url):
    assert_validation_error(api.post("/v1/sessions", {**VALID, field: url}), field, "invalid_url")


@pytest.mark.parametrize("field", ["callback_url", "cancel_url", "notification_url"])
@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "/relative/path",
        "shop.example.com/hook",
        "ftp://shop.example.com/hook",
        "https://",
        "https://exa mple.com/",
        "javascript:alert(1)",
        "https://shop.example.com/\u0000",
        "https://shop.example.com/\ud800",
    ],
)
def test_a_url_that_is_not_absolute_http_is_invalid_url(api, field, url):
    raw = json.dumps({**VALID, field: url})  # ASCII escapes: the NUL and the lone surrogate arrive as JSON escapes

    assert_validation_error(api.post("/v1/sessions", raw=raw), field, "invalid_url")


@pytest.mark.parametrize("field", ["callback_url", "cancel_url", "notification_url"])
@pytest.mark.parametrize("url", ["https://user:secret@shop.example.com/hook", "https://token@shop.example.com/hook"])
def test_a_url_carrying_credentials_is_refused(api, field, url):
    response = api.post("/v1/sessions", {**VALID, field: url})

    assert_validation_error(response, field, "invalid_url")
    assert not VerificationSession.objects.exists()


@pytest.mark.parametrize("field", ["callback_url", "cancel_url", "notification_url"])
@pytest.mark.parametrize("value", [42, True, ["https://shop.example.com"], {"url": "https://shop.example.com"}])
def test_a_url_of_a_wrong_type_is_invalid_type(api, field, value):
    assert_validation_error(api.post("/v1/sessions", {**VALID, field: value}), field, "invalid_type")


@pytest.mark.parametrize("field", ["callback_url", "cancel_url", "notification_url"])
def test_a_url_longer_than_2048_characters_is_out_of_range(api, field):
    url = "https://shop.example.com/" + "a" * 2024

    assert_validation_error(api.post("/v1/sessions", {**VALID, field: url}), field, "out_of_range")


def test_a_notification_url_over_plain_http_is_https_required(api):
    response = api.post("/v1/sessions", {**VALID, "notification_url": "http://shop.example.com/hook"})

    assert_validation_error(response, "notification_url", "https_required")


def test_a_notification_url_over_plain_http_is_refused_even_with_debug_on(api, settings):
    settings.DEBUG = True

    response = api.post("/v1/sessions", {**VALID, "notification_url": "http://localhost/hook"})

    assert_validation_error(response, "notification_url", "https_required")


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.1/hook",
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://169.254.169.254/latest",
        "https://[::1]/hook",
        "https://192.168.1.20/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://printer.local/",
    ],
)
def test_a_notification_url_to_a_private_host_is_forbidden_host(api, url):
    assert_validation_error(
        api.post("/v1/sessions", {**VALID, "notification_url": url}), "notification_url", "forbidden_host"
    )


@pytest.mark.parametrize("field", ["callback_url", "cancel_url"])
def test_a_plain_http_return_url_to_a_public_host_is_refused_with_debug_off(api, field):
    response = api.post("/v1/sessions", {**VALID, field: "http://shop.example.com/done"})

    assert_validation_error(response, field, "https_required")


def test_an_unknown_field_is_unknown_field(api):
    response = api.post("/v1/sessions", {**VALID, "ageLimit": 18})

    assert_validation_error(response, "ageLimit", "unknown_field")


def test_all_errors_are_reported_at_once(api):
    response = api.post("/v1/sessions", {"age_limit": 30, "colour": "red", "notification_url": "http://x.example"})

    body = assert_problem(response, 400, "validation_error")
    assert field_errors(body) == {
        "subject": "required",
        "age_limit": "out_of_range",
        "colour": "unknown_field",
        "notification_url": "https_required",
    }
    assert body["detail"].endswith("(and 3 more errors)")


def test_a_refused_request_creates_no_session(api):
    api.post("/v1/sessions", {**VALID, "age_limit": 9})

    assert not VerificationSession.objects.exists()


# --- 413, 415 ---


def test_a_body_over_16_kib_is_413_payload_too_large(api):
    raw = json.dumps({**VALID, "padding": "x" * 16 * 1024})

    assert_problem(api.post("/v1/sessions", raw=raw), 413, "payload_too_large")


def test_a_body_of_a_megabyte_is_413_payload_too_large(api):
    raw = json.dumps({**VALID, "padding": "x" * 1024 * 1024})

    assert_problem(api.post("/v1/sessions", raw=raw), 413, "payload_too_large")


def test_a_body_of_exactly_16_kib_is_read(api):
    raw = json.dumps(VALID)
    raw = raw + " " * (16 * 1024 - len(raw))

    assert api.post("/v1/sessions", raw=raw).status_code == 201


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "application/json-patch+json",
        "",
    ],
)
def test_a_body_that_is_not_declared_json_is_415(api, content_type):
    response = api.post("/v1/sessions", raw=json.dumps(VALID), content_type=content_type)

    assert_problem(response, 415, "unsupported_media_type")


# --- 404, 405, 500: never an HTML page ---


@pytest.mark.parametrize("path", ["/v1/", "/v1/nowhere", "/v1/sessions/", "/v1/sessions/ses_x/extra", "/v1/Sessions"])
def test_an_unknown_path_under_v1_is_a_problem_not_an_html_page(api, path):
    assert_problem(api.get(path), 404, "not_found")


def test_an_unknown_path_is_a_problem_even_with_debug_on(api, settings):
    settings.DEBUG = True

    assert_problem(api.get("/v1/nowhere"), 404, "not_found")


@pytest.mark.parametrize(
    "method, path",
    [
        ("put", "/v1/sessions"),
        ("delete", "/v1/sessions"),
        ("patch", "/v1/sessions/ses_x"),
        ("post", "/v1/sessions/ses_x"),
        ("get", "/v1/sessions/ses_x/cancel"),
    ],
)
def test_a_wrong_method_is_405_with_allow(api, method, path):
    response = getattr(api.client, method)(path, headers={"X-API-Key": api.api_key})

    assert_problem(response, 405, "method_not_allowed")
    assert response["Allow"]


def test_an_unhandled_error_in_an_api_view_is_a_logged_500_problem(api, monkeypatch, caplog):
    def broken_create(**kwargs):
        raise RuntimeError("secret internals that must not leak")

    monkeypatch.setattr("sessions_api.api.views.session_create", broken_create)

    with caplog.at_level(logging.ERROR):
        response = api.post("/v1/sessions", VALID)

    body = assert_problem(response, 500, "internal_error")
    assert b"secret internals" not in response.content
    assert "requestId" in body["detail"]
    logged = [record for record in caplog.records if record.name == "sessions_api.api.problems" and record.exc_info]
    assert logged and "secret internals" in str(logged[0].exc_info[1])


@pytest.mark.urls(__name__)
def test_an_unhandled_error_in_any_view_under_v1_is_a_logged_500_problem(anonymous_api, caplog):
    with caplog.at_level(logging.ERROR):
        response = anonymous_api.client.get("/v1/_boom")

    assert_problem(response, 500, "internal_error")
    assert b"secret internals" not in response.content
    logged = [record for record in caplog.records if record.exc_info]
    assert logged and "secret internals" in str(logged[0].exc_info[1])


@pytest.mark.urls(__name__)
def test_an_unhandled_error_with_debug_on_is_still_a_problem_not_a_debug_page(anonymous_api, settings):
    settings.DEBUG = True

    assert_problem(anonymous_api.client.get("/v1/_boom"), 500, "internal_error")


@pytest.mark.urls(__name__)
def test_a_plain_django_html_refusal_under_v1_becomes_a_problem(anonymous_api):
    assert_problem(anonymous_api.client.get("/v1/_forbidden"), 403, "forbidden")
    not_allowed = anonymous_api.client.post("/v1/_plain")
    assert_problem(not_allowed, 405, "method_not_allowed")
    assert not_allowed["Allow"] == "GET"


@pytest.mark.urls(__name__)
def test_a_successful_plain_answer_under_v1_is_left_alone(anonymous_api):
    response = anonymous_api.client.get("/v1/_plain")

    assert (response.status_code, response.content) == (200, b"ok")


def test_an_idempotency_key_longer_than_255_characters_is_refused(api):
    response = api.post("/v1/sessions", VALID, headers={"Idempotency-Key": "k" * 256})

    assert_validation_error(response, "Idempotency-Key", "out_of_range")
    assert not VerificationSession.objects.exists()


SECURITY_HEADERS = (
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Cross-Origin-Opener-Policy",
    "X-Frame-Options",
    "Strict-Transport-Security",
)


@pytest.mark.parametrize("path", ["/v1/nope", "/v1/sessions/ses_x/extra", "/v1/"])
def test_problems_for_unknown_paths_carry_the_same_security_headers_as_other_answers(api, path):
    answered = api.client.get(f"/v1/sessions/{new_session_id()}", secure=True, headers=api._headers(None))
    unknown = api.client.get(path, secure=True, headers=api._headers(None))

    assert_problem(unknown, 404, "not_found")
    for name in SECURITY_HEADERS:
        assert unknown.get(name) == answered.get(name) and unknown.get(name), name
