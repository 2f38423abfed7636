"""What gunicorn itself refuses (request line, header sizes, broken headers) still answers in the API's format.

These requests never reach Django: the answer comes from gunicorn.conf.py's error writer, so the test
runs the README's production command and speaks raw HTTP to it.
"""

import json
import socket

import pytest

from tests.support.web_server import PORT, gunicorn

pytestmark = pytest.mark.django_db(transaction=True)


def _raw(request: bytes) -> tuple[int, dict, bytes]:
    with socket.create_connection(("127.0.0.1", PORT), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, value in (line.split(":", 1) for line in header_lines)}
    return int(status_line.split()[1]), headers, body


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), gunicorn(workers=1) as url:
        yield url


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (b"GET /v1/sessions/" + b"a" * 5000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 414, "uri_too_long"),
        (
            b"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"b" * 9000 + b"\r\n\r\n",
            431,
            "request_header_fields_too_large",
        ),
        (b"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n", 400, "bad_request"),
    ],
)
def test_requests_gunicorn_refuses_get_a_problem_document_not_html(server, request_bytes, status, code):
    got_status, headers, body = _raw(request_bytes)

    assert got_status == status
    assert headers["content-type"] == "application/problem+json"
    assert headers["x-content-type-options"] == "nosniff"
    problem = json.loads(body)
    assert (problem["status"], problem["code"]) == (status, code)
    assert problem["type"].endswith("/" + code) and problem["title"] and problem["detail"]
    assert b"<html" not in body
