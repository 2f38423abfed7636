"""The webhooks AgeVerify sends, as OpenAPI 3.1 `webhooks` (SPECTACULAR_SETTINGS["WEBHOOKS"]): payloads and headers.

Raw operation objects: drf-spectacular's webhook helper documents a body but no request headers, and
the headers are what a receiver verifies.
"""

from drf_spectacular.utils import OpenApiWebhook

from webhooks.services import TEST_EVENT

from ..choices import Mode, Status
from ..events import (
    EVENT_COMPLETED,
    EVENT_DATA_FIELDS,
    EVENT_REDACTED,
    EVENT_REQUIRES_INPUT,
    EVENT_STARTED,
    EXAMPLE_TIMESTAMP,
    event_example,
)

_STRING = {"type": "string"}
_MODE = {
    "type": "string",
    "enum": Mode.values,
    "description": "`live` or `test`. Grant nothing on a `test` event: sandbox sessions need no user.",
}
_METADATA = {
    "type": "object",
    "additionalProperties": {"type": "string"},
    "example": {"orderId": "A-1042"},
    "description": "The session's `metadata` as sent at creation; `{}` when none, or after a redaction.",
}
_TIMESTAMP = {
    "type": "string",
    "format": "date-time",
    "example": EXAMPLE_TIMESTAMP,
    "description": "When the event happened (UTC, milliseconds).",
}

HEADERS = [
    {
        "name": "webhook-id",
        "in": "header",
        "required": True,
        "schema": {**_STRING, "example": "msg_01K8ZJ3Q4T9V2N6XH5C7WYRB3D"},
        "description": "The event's id (`msg_...`), the same on every attempt and every re-send: de-duplicate on it.",
    },
    {
        "name": "webhook-timestamp",
        "in": "header",
        "required": True,
        "schema": {**_STRING, "example": "1795343730"},
        "description": "Unix seconds of this attempt; refuse events more than 5 minutes away from your clock.",
    },
    {
        "name": "webhook-signature",
        "in": "header",
        "required": True,
        "schema": {**_STRING, "example": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4="},
        "description": "`v1,` + base64 of HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}`, keyed by the "
        "decoded bytes of the tenant's `whsec_` secret of the event's mode (Standard Webhooks). "
        "During a secret rotation two signatures, space separated: accept the event if either verifies.",
    },
    {
        "name": "content-type",
        "in": "header",
        "required": True,
        "schema": {**_STRING, "enum": ["application/json"]},
        "description": "Always `application/json`.",
    },
    {
        "name": "user-agent",
        "in": "header",
        "required": True,
        "schema": {**_STRING, "enum": ["ageverify-webhooks/1"]},
        "description": "Always `ageverify-webhooks/1`.",
    },
]
_ANSWERS = {
    "2XX": {"description": "Received. Any 2xx ends the delivery."},
    "default": {
        "description": "Anything else (including 3xx, which is not followed), a timeout (3 s connect, 10 s "
        "in all) or a connection error is retried: after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h "
        "and 10 h (+-20 %), then the delivery is failed."
    },
}


def _event(name: str, summary: str, description: str, data: dict) -> OpenApiWebhook:
    # The properties documented are the fields the event is built with (sessions_api.events), in their order.
    if set(data) != set(EVENT_DATA_FIELDS[name]):
        raise ValueError(f"{name}: documented {sorted(data)}, sent {sorted(EVENT_DATA_FIELDS[name])}")
    data = {field: data[field] for field in EVENT_DATA_FIELDS[name]}
    body = {
        "type": "object",
        "required": ["event", "timestamp", "data"],
        "properties": {
            "event": {"type": "string", "enum": [name]},
            "timestamp": _TIMESTAMP,
            "data": {"type": "object", "required": list(data), "properties": data},
        },
    }
    operation = {
        "summary": summary,
        "description": description,
        "parameters": HEADERS,
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": body, "example": event_example(name)}},
        },
        "responses": _ANSWERS,
    }
    return OpenApiWebhook(name=name, decorator={"post": operation})


verification_completed = _event(
    EVENT_COMPLETED,
    "A session is final (approved or denied)",
    "Sent to the session's `notification_url`, or else to the tenant's default address for the session's mode "
    "(dashboard, Webhooks), when webhook sending is enabled for the tenant. Confirm with "
    "`GET /v1/sessions/{sessionId}` before acting; the event carries no result numbers.",
    {
        "sessionId": {**_STRING, "example": "ses_01K8ZJ3Q4T9V2N6XH5C7WYRB3D"},
        "subject": {**_STRING, "description": "Your `subject` of the session."},
        "status": {"type": "string", "enum": [Status.APPROVED, Status.DENIED]},
        "ageLimit": {"type": "integer", "minimum": 10, "maximum": 21},
        "mode": _MODE,
        "metadata": _METADATA,
    },
)

_OPEN_SESSION = {
    "sessionId": {**_STRING, "example": "ses_01K8ZJ3Q4T9V2N6XH5C7WYRB3D"},
    "subject": {**_STRING, "description": "Your `subject` of the session."},
    "status": {"type": "string", "enum": [Status.INITIATED, Status.REQUIRES_DOC]},
    "ageLimit": {"type": "integer", "minimum": 10, "maximum": 21},
    "mode": _MODE,
    "metadata": _METADATA,
}
_OPT_IN = (
    " Sent only if the tenant opted into it for the session's mode (dashboard, Webhooks), to the same address as "
    "`verification.completed`, signed and retried the same way; never grant anything on it."
)

verification_started = _event(
    EVENT_STARTED,
    "The user opened the flow (opt-in)",
    "Sent once per session, the first time its user opens the hosted flow (web link, SDK or app launch); a reload "
    "or a second tab sends nothing more. Use it to tell a user who never started from one who stalled." + _OPT_IN,
    {**_OPEN_SESSION, "status": {"type": "string", "enum": [Status.INITIATED]}},
)

verification_requires_input = _event(
    EVENT_REQUIRES_INPUT,
    "The user is asked for more (opt-in)",
    "Sent each time the session is sent back to a step: `input` is `document` when the user must show an ID "
    "document, `selfie` when a selfie must be retaken." + _OPT_IN,
    {**_OPEN_SESSION, "input": {"type": "string", "enum": ["document", "selfie"]}},
)

verification_redacted = _event(
    EVENT_REDACTED,
    "A session's personal data was erased (opt-in)",
    "Sent when a final session is redacted (`POST /v1/sessions/{sessionId}/redact`), once, to the same address as "
    "`verification.completed`, only if the tenant opted into this event for the session's mode. Erase your own "
    "copy of the session's personal data; `subject` is gone and `metadata` is `{}`.",
    {
        "sessionId": {**_STRING, "example": "ses_01K8ZJ3Q4T9V2N6XH5C7WYRB3D"},
        "status": {"type": "string", "enum": [Status.APPROVED, Status.DENIED]},
        "ageLimit": {"type": "integer", "minimum": 10, "maximum": 21},
        "mode": _MODE,
        "metadata": _METADATA,
    },
)

test_event = _event(
    TEST_EVENT,
    "A test event (dashboard: Send test webhook)",
    "Sent when tenant staff press \"Send test webhook\" on the dashboard's Webhooks page, to that mode's default "
    "address and signed with that mode's secret, to check a receiver. It is about no session: acknowledge it and "
    "do nothing else.",
    {
        "test": {"type": "boolean", "enum": [True]},
        "mode": _MODE,
        "message": {**_STRING, "example": "A test event sent from the AgeVerify dashboard. It is about no session."},
    },
)
