"""The webhook events a session sends: their names, the fields of each, the payloads, the examples and the scrub.

The one declaration of an event's shape: the state machine sends what `event_payload` builds, the OpenAPI
document (sessions_api.api.webhook_schema) lists the fields of EVENT_DATA_FIELDS and shows `event_example`,
which the dashboard sends as a sample, and retention erases a queued event's personal data with
`payload_without_personal_data`. The examples are built by the same code as the real events, from a session
that exists nowhere (its GET answers 404), so a receiver can be tried without a real user.
"""

import json
from types import SimpleNamespace

from webhooks.services import TEST_EVENT, test_event_payload

from .choices import Status
from .timestamps import iso_ms

EVENT_COMPLETED = "verification.completed"
EVENT_REDACTED = "verification.redacted"
EVENT_STARTED = "verification.started"
EVENT_REQUIRES_INPUT = "verification.requires_input"
# Sent only to a tenant that opted in, per mode (dashboard, Webhooks): event -> what it tells.
OPTIONAL_EVENTS = {
    EVENT_STARTED: "the user opened the flow (once per session)",
    EVENT_REQUIRES_INPUT: "the user is asked for a document, or to retake a selfie",
    EVENT_REDACTED: "a session's personal data was erased (POST /v1/sessions/{id}/redact)",
}

_SESSION_FIELDS = ("sessionId", "subject", "status", "ageLimit", "mode", "metadata")
# Each event's `data` fields, in the order they are sent. webhook.test is the dashboard's (webhooks.services).
EVENT_DATA_FIELDS: dict[str, tuple[str, ...]] = {
    EVENT_COMPLETED: _SESSION_FIELDS,
    EVENT_STARTED: _SESSION_FIELDS,
    EVENT_REQUIRES_INPUT: (*_SESSION_FIELDS, "input"),
    EVENT_REDACTED: ("sessionId", "status", "ageLimit", "mode", "metadata"),
    TEST_EVENT: ("test", "mode", "message"),
}
# What a redaction erases from an event still owed to the partner, and what it leaves in its place.
PERSONAL_DATA_ERASED = {"subject": "", "metadata": {}}


def _session_data(session) -> dict:
    """Every field a session event may carry; `session` is a VerificationSession (or the examples' stand-in)."""
    return {
        "sessionId": session.id,
        "subject": session.subject,
        "status": session.status,
        "ageLimit": session.age_limit,
        "mode": session.mode,
        "metadata": session.metadata or {},
        "input": session.step,
    }


def event_body(event: str, timestamp: str, session) -> dict:
    """The body of session event `event` at `timestamp` (ISO, milliseconds): its declared fields of `session`."""
    data = _session_data(session)
    return {"event": event, "timestamp": timestamp, "data": {field: data[field] for field in EVENT_DATA_FIELDS[event]}}


def event_payload(event: str, at, session) -> bytes:
    """The bytes sent (and signed, and re-sent unchanged) for `event` of `session` at the moment `at`."""
    return json.dumps(event_body(event, iso_ms(at), session), separators=(",", ":"), ensure_ascii=False).encode()


def completed_event_payload(session) -> bytes:
    """The spec's section 6 payload plus `mode` (the contract's addition) and the partner's `metadata` (issue 29)."""
    return event_payload(EVENT_COMPLETED, session.finalized_at, session)


def started_event_payload(session, at) -> bytes:
    """`verification.started`: the user opened the flow for the first time, at `at`."""
    return event_payload(EVENT_STARTED, at, session)


def requires_input_event_payload(session) -> bytes:
    """`verification.requires_input`: `input` is `document` (the document step) or `selfie` (a retake)."""
    return event_payload(EVENT_REQUIRES_INPUT, session.updated_at, session)


def redacted_event_payload(session) -> bytes:
    """`verification.redacted`: the session's personal data is erased; its status and times stay."""
    return event_payload(EVENT_REDACTED, session.redacted_at, session)


def payload_without_personal_data(payload: str) -> str:
    """A queued event's body with its session's subject and metadata erased (a redaction), as it is sent."""
    body = json.loads(payload)
    data = body.get("data", {})
    for field, erased in PERSONAL_DATA_ERASED.items():
        if field in data:
            data[field] = erased
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


EXAMPLE_TIMESTAMP = "2026-11-22T10:15:30.123Z"
_EXAMPLE_SESSION = {
    "id": "ses_01K8ZJ3Q4T9V2N6XH5C7WYRB3D",
    "subject": "user_8412",
    "age_limit": 18,
    "metadata": {"orderId": "A-1042"},
    "step": "document",
}
# The example session as each event shows it: its status then, and erased for the redaction.
_EXAMPLE_STATE = {
    EVENT_COMPLETED: {"status": Status.APPROVED.value},
    EVENT_STARTED: {"status": Status.INITIATED.value},
    EVENT_REQUIRES_INPUT: {"status": Status.REQUIRES_DOC.value},
    EVENT_REDACTED: {"status": Status.APPROVED.value, **PERSONAL_DATA_ERASED},
}


def event_example(name: str, *, mode: str = "test", timestamp: str = EXAMPLE_TIMESTAMP) -> dict:
    """The documented example of event `name`, for `mode` and at `timestamp` (the OpenAPI `example` as is)."""
    if name == TEST_EVENT:
        return {**json.loads(test_event_payload(mode=mode)), "timestamp": timestamp}
    session = SimpleNamespace(**{**_EXAMPLE_SESSION, **_EXAMPLE_STATE[name], "mode": mode})
    return event_body(name, timestamp, session)
