"""The client: `AgeVerify(api_key, base_url=...)` with `.sessions`, `.sandbox` and `.webhooks`."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

import requests

from ._transport import RetryPolicy, Transport
from .errors import ConfirmationError, WaitTimeout
from .models import CreatedSession, SessionPage, SessionResult
from .webhooks import WebhookEvent, WebhookVerifier

__all__ = ["AgeVerify", "Sandbox", "Sessions", "Webhooks"]

__version__ = "0.1.0"


def _mode_of_key(api_key: str) -> str | None:
    for prefix, mode in (("av_live_", "live"), ("av_test_", "test")):
        if api_key.startswith(prefix):
            return mode
    return None


def _path(session_id: str) -> str:
    if not isinstance(session_id, str) or not session_id:
        raise ValueError("session_id must be a non-empty string")
    return "/v1/sessions/" + quote(session_id, safe="")


class Sessions:
    """`POST` and `GET /v1/sessions`, `GET /v1/sessions/{id}`, cancel, and waiting for or confirming a result."""

    def __init__(self, transport: Transport):
        self._transport = transport

    def create(
        self,
        *,
        subject: str,
        age_limit: int,
        callback_url: str | None = None,
        cancel_url: str | None = None,
        notification_url: str | None = None,
        metadata: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
        extra_fields: Mapping[str, Any] | None = None,
    ) -> CreatedSession:
        """Create a session. An `Idempotency-Key` is sent (a new UUID unless you give one) and reused on
        every retry of this call, so a retried create never makes a second session. Pass your own key
        (an order or user id) to make a create you repeat yourself, later, idempotent as well."""
        body: dict[str, Any] = {"subject": subject, "age_limit": age_limit}
        for name, value in (
            ("callback_url", callback_url),
            ("cancel_url", cancel_url),
            ("notification_url", notification_url),
            ("metadata", dict(metadata) if metadata is not None else None),
        ):
            if value is not None:
                body[name] = value
        body.update(extra_fields or {})
        key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
        answer = self._transport.request("POST", "/v1/sessions", body=body, headers={"Idempotency-Key": key})
        session = dict(answer.body["session"])
        if "clientSecret" not in session and "clientSecret" in answer.body:
            session["clientSecret"] = answer.body["clientSecret"]
        return CreatedSession.from_json(session)

    def list(
        self,
        *,
        status: str | Iterable[str] | None = None,
        subject: str | None = None,
        created_from: datetime | str | None = None,
        created_before: datetime | str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> SessionPage:
        """One page of `GET /v1/sessions` (the key's mode only), newest first; the filters combine.

        `status` is one status or several; `created_from` (inclusive) and `created_before` are aware
        datetimes or ISO 8601 strings with a time zone; `limit` 1..100 (the service's default: 20)."""
        params: dict[str, str] = {}
        if status is not None:
            params["status"] = status if isinstance(status, str) else ",".join(status)
        if subject is not None:
            params["subject"] = subject
        for name, moment in (("created_from", created_from), ("created_before", created_before)):
            if isinstance(moment, datetime):
                if moment.tzinfo is None:
                    raise ValueError(f"{name} must be an aware datetime (with a time zone)")
                params[name] = moment.isoformat()
            elif moment is not None:
                params[name] = moment
        if limit is not None:
            params["limit"] = str(limit)
        if cursor is not None:
            params["cursor"] = cursor
        return SessionPage.from_json(self._transport.request("GET", "/v1/sessions", params=params).body)

    def iterate(self, **filters: Any) -> Iterator[SessionResult]:
        """Every session matching `list`'s filters, newest first, following the pages as it goes."""
        cursor = filters.pop("cursor", None)
        while True:
            page = self.list(**filters, cursor=cursor)
            yield from page.data
            if not page.has_more or not page.next_cursor:
                return
            cursor = page.next_cursor

    def cancel(self, session_id: str) -> SessionResult:
        """`POST /v1/sessions/{id}/cancel`: end an open session as `denied` / `cancelled`.

        Cancelling a cancelled session answers it again (so the call is retried like a GET); a session
        that ended otherwise raises `ConflictError` (`session_final`)."""
        answer = self._transport.request("POST", _path(session_id) + "/cancel", idempotent=True)
        return SessionResult.from_json(answer.body)

    def redact(self, session_id: str) -> SessionResult:
        """`POST /v1/sessions/{id}/redact`: erase a final session's subject, metadata and results.

        Idempotent (retried like a GET); an open session raises `ConflictError` (`session_not_final`)."""
        answer = self._transport.request("POST", _path(session_id) + "/redact", idempotent=True)
        return SessionResult.from_json(answer.body)

    def get(self, session_id: str) -> SessionResult:
        """The session and its check results; the official result (not a browser callback)."""
        return SessionResult.from_json(self._transport.request("GET", _path(session_id)).body)

    def wait(self, session_id: str, *, timeout: float = 300.0, interval: float = 2.0) -> SessionResult:
        """Poll `get` every `interval` seconds until the session is final (`approved` or `denied`).

        Raises `WaitTimeout` (with `.last`, the last result read) after `timeout` seconds. A session
        never stays open past its `expiresAt`: the service then finalizes it as `denied` / `expired`.
        """
        if interval <= 0 or timeout < 0:
            raise ValueError("interval must be positive and timeout not negative")
        deadline = time.monotonic() + timeout
        while True:
            result = self.get(session_id)
            if result.is_final:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeout(f"{session_id} is still {result.status} after {timeout} s", result)
            time.sleep(min(interval, remaining))

    def confirm(
        self,
        session_id: str,
        *,
        subject: str | None = None,
        age_limit: int | None = None,
        mode: str | None = None,
    ) -> SessionResult:
        """The server-side confirmation after a browser or app says "done": one GET, then checks.

        Returns the result when the session is `approved` and, for each of `subject`, `age_limit`
        and `mode` you give, equal to it; raises `ConfirmationError` (with `.result`) otherwise. A
        browser callback is only a UI signal: grant access on this, or on a verified webhook.
        """
        result = self.get(session_id)
        session = result.session
        expected = {"subject": subject, "age_limit": age_limit, "mode": mode}
        for name, wanted in expected.items():
            if wanted is not None and getattr(session, name) != wanted:
                raise ConfirmationError(
                    f"{session_id}: {name} is {getattr(session, name)!r}, expected {wanted!r}", result
                )
        if not result.approved:
            detail = f" ({result.reason})" if result.reason else ""
            raise ConfirmationError(f"{session_id} is {result.status}{detail}, not approved", result)
        return result


class Sandbox:
    """Test keys only (`av_test_...`): drive a sandbox session to an outcome without a user."""

    def __init__(self, transport: Transport):
        self._transport = transport

    def advance(self, session_id: str, to: str, *, reason: str | None = None) -> SessionResult:
        """`POST /v1/test/sessions/{id}/advance` with `to` in processing, requires_doc, approved, denied,
        and for a final `to` optionally the `reason` to end with (`document_expired`, `expired`, ...).

        Not idempotent, so it is never retried after the request may have reached the server."""
        path = "/v1/test/sessions/" + quote(session_id, safe="") + "/advance"
        body = {"to": to} if reason is None else {"to": to, "reason": reason}
        return SessionResult.from_json(self._transport.request("POST", path, body=body).body)


class Webhooks:
    def __init__(self, secret: str | None, mode: str | None):
        self._secret = secret
        self._mode = mode

    def verify(self, body: bytes | str, headers: Mapping[str, str]) -> WebhookEvent:
        """Verify a received webhook with the client's `webhook_secret`; the event must be of the key's mode."""
        if not self._secret:
            raise ValueError("AgeVerify(..., webhook_secret='whsec_...') is needed to verify webhooks")
        return WebhookVerifier(self._secret, mode=self._mode).verify(body, headers)


class AgeVerify:
    """A client for one API key.

    `webhook_secret` is the signing secret of the key's mode (`webhook_secret` for a live key,
    `test_webhook_secret` for a test key). `timeout` is per HTTP attempt (seconds, or a
    `(connect, read)` pair). Retries: see `max_retries`, `backoff_base`, `backoff_max` and
    `max_retry_wait` (a server asking to wait longer than that raises instead of sleeping).
    """

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str,
        webhook_secret: str | None = None,
        timeout: float | tuple[float, float] = (5.0, 30.0),
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        max_retry_wait: float = 60.0,
        http: requests.Session | None = None,
    ):
        if not api_key:
            raise ValueError("an API key (av_live_... or av_test_...) is required")
        if max_retries < 0:
            raise ValueError("max_retries must not be negative")
        self.mode = _mode_of_key(api_key)
        self._transport = Transport(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            http=http,
            policy=RetryPolicy(
                max_retries=max_retries,
                backoff_base=backoff_base,
                backoff_max=backoff_max,
                max_retry_wait=max_retry_wait,
            ),
            user_agent=f"ageverify-client-python/{__version__} requests/{requests.__version__}",
        )
        self.sessions = Sessions(self._transport)
        self.sandbox = Sandbox(self._transport)
        self.webhooks = Webhooks(webhook_secret, self.mode)

    def close(self) -> None:
        """Close the pooled HTTP connections (also done by `with AgeVerify(...) as av:`)."""
        self._transport.http.close()

    def __enter__(self) -> AgeVerify:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
