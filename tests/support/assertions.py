"""Assertions on the API's error format (CONTRACT 2): RFC 9457 problem details, shared by the API tests."""

import json

PROBLEM_TYPE_BASE = "https://docs.ageverify.dev/errors/"
PROBLEM_KEYS = {"type", "title", "status", "code", "detail", "requestId"}


def assert_problem(response, status: int, code: str) -> dict:
    """The response is an RFC 9457 problem with this status and code; returns its body."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response["Content-Type"] == "application/problem+json", response["Content-Type"]
    body = json.loads(response.content)
    assert PROBLEM_KEYS <= set(body) <= PROBLEM_KEYS | {"errors"}, body
    assert body["status"] == status
    assert body["code"] == code
    assert body["type"] == PROBLEM_TYPE_BASE + code
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]
    assert body["requestId"] == response["X-Request-Id"]
    assert b"Traceback" not in response.content and b"<html" not in response.content.lower()
    return body


def field_errors(body: dict) -> dict[str, str]:
    """`errors` as {field: code}; each error carries the contract's three keys."""
    errors = body.get("errors")
    assert isinstance(errors, list) and errors, body
    for error in errors:
        assert set(error) == {"field", "code", "message"}, error
        assert isinstance(error["message"], str) and error["message"]
    return {error["field"]: error["code"] for error in errors}


def assert_validation_error(response, field: str, code: str) -> dict:
    body = assert_problem(response, 400, "validation_error")
    assert field_errors(body).get(field) == code, body
    return body
