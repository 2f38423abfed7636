"""gunicorn settings, read from the working directory by docs/operations.md's `gunicorn ageverify.wsgi ...` command:
the number of sync workers, and the answers to requests gunicorn refuses itself.

Requests gunicorn refuses before Django sees them (request line over 4094 bytes, a header over 8190
bytes or more than 100 headers, a malformed header) used to get gunicorn's HTML page; the API's
clients expect RFC 9457 problem details everywhere, so the error writer below answers in that format.
The TLS proxy in front should refuse even earlier with the same limits (docs/operations.md).
"""

import json
import os

from gunicorn import util

from ageverify.env import ENV

# Sync workers, two per core the process may use plus one (gunicorn's own advice), or WEB_CONCURRENCY.
# A request holds its worker for its whole length, and a session's creation holds it through its
# commit's wait for the disk: with fewer workers than that, the CPU stands idle during those waits.
workers = ENV.integer(
    "WEB_CONCURRENCY",
    2 * len(os.sched_getaffinity(0)) + 1,
    "gunicorn's sync workers (`gunicorn.conf.py`)",
    minimum=1,
    shown="two per core plus one",
    example="5",
    section="Web server (gunicorn)",
)

# gunicorn's defaults, stated so that the proxy's limits (docs/operations.md) can be set to match them.
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190

_CODES = {
    400: "bad_request",
    403: "forbidden",
    414: "uri_too_long",
    417: "expectation_failed",
    431: "request_header_fields_too_large",
    500: "internal_error",
    501: "not_implemented",
}
_DETAILS = {
    414: f"The request line is longer than {limit_request_line} bytes.",
    431: f"A request header is longer than {limit_request_field_size} bytes, or there are more than "
    f"{limit_request_fields}.",
    500: "Something went wrong on our side.",
}


def _write_problem(sock, status_int, reason, mesg):
    code = _CODES.get(status_int, "bad_request")
    body = json.dumps(
        {
            "type": "https://docs.ageverify.dev/errors/" + code,
            "title": reason,
            "status": status_int,
            "code": code,
            "detail": _DETAILS.get(status_int, "The request could not be understood."),
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\nContent-Type: application/problem+json\r\n"
        f"X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


# Workers call `util.write_error` for every request they refuse; they are forked after this file runs.
util.write_error = _write_problem
