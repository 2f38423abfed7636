"""Verifying AgeVerify's webhooks (Standard Webhooks signatures, through the `standardwebhooks` package)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from standardwebhooks.webhooks import Webhook

from .errors import WebhookVerificationError
from .models import FINAL_STATUSES, Status, parse_timestamp

__all__ = ["WebhookEvent", "WebhookEventData", "WebhookVerifier"]

_DATA_FIELDS = ("sessionId", "subject", "status", "ageLimit", "mode", "metadata")
TEST_EVENT = "webhook.test"


@dataclass(frozen=True)
class WebhookEventData:
    session_id: str
    subject: str | None
    status: str
    age_limit: int | None
    mode: str | None
    metadata: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def approved(self) -> bool:
        return self.status == Status.APPROVED

    @property
    def is_final(self) -> bool:
        return self.status in FINAL_STATUSES


@dataclass(frozen=True)
class WebhookEvent:
    """A verified `verification.completed` (or later) event.

    `webhook_id` is the `webhook-id` header: the same on every attempt and re-send of one event, so
    de-duplicate on it (delivery is at-least-once).
    """

    webhook_id: str
    event: str
    timestamp: datetime | None
    data: WebhookEventData
    extra: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_test(self) -> bool:
        """A `webhook.test` event (dashboard: "Send test webhook"): about no session; acknowledge it, do nothing."""
        return self.event == TEST_EVENT


def _event_from(payload: Any, webhook_id: str) -> WebhookEvent:
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), dict):
        raise WebhookVerificationError("the webhook body is not an AgeVerify event")
    data = payload["data"]
    if payload.get("event") == TEST_EVENT:
        # About no session: no sessionId or status, and `session_id` / `status` are empty.
        data = {"sessionId": "", "status": "", **data}
    if not isinstance(data.get("sessionId"), str) or not isinstance(data.get("status"), str):
        raise WebhookVerificationError("the webhook body has no sessionId or status")
    try:
        timestamp = parse_timestamp(payload.get("timestamp"))
    except ValueError as error:
        raise WebhookVerificationError(f"the webhook timestamp does not read: {error}") from error
    return WebhookEvent(
        webhook_id=webhook_id,
        event=str(payload.get("event")),
        timestamp=timestamp,
        data=WebhookEventData(
            session_id=data["sessionId"],
            subject=data.get("subject"),
            status=data["status"],
            age_limit=data.get("ageLimit"),
            mode=data.get("mode"),
            metadata=dict(data.get("metadata") or {}),
            extra={k: v for k, v in data.items() if k not in _DATA_FIELDS},
        ),
        extra={k: v for k, v in payload.items() if k not in ("event", "timestamp", "data")},
        raw=payload,
    )


class WebhookVerifier:
    """Checks a webhook with the signing secret of one mode (`whsec_...`; live and test events differ).

    `mode` ("live" or "test"), when given, also refuses an event of the other mode, so a receiver of
    live traffic never grants anything on a sandbox event.
    """

    def __init__(self, secret: str, *, mode: str | None = None):
        if not secret:
            raise ValueError("a webhook signing secret (whsec_...) is required")
        self._webhook = Webhook(secret)
        self.mode = mode

    def verify(self, body: bytes | str, headers: Mapping[str, str]) -> WebhookEvent:
        """Verify the raw request body (exactly as received) and its headers; raise WebhookVerificationError."""
        lowered = {str(name).lower(): str(value) for name, value in headers.items()}
        try:
            payload = self._webhook.verify(body, lowered)
        except Exception as error:  # the package raises ValueError, binascii.Error... on malformed headers too
            raise WebhookVerificationError(f"webhook not verified: {error}") from error
        event = _event_from(payload, lowered["webhook-id"])
        if self.mode is not None and event.data.mode != self.mode:
            raise WebhookVerificationError(f"a {event.data.mode} event, expected {self.mode}")
        return event
