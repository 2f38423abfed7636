"""Exceptions. An API error carries the RFC 9457 problem details the service answered with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "AgeVerifyError",
    "ApiConnectionError",
    "ApiError",
    "AuthenticationError",
    "BadRequestError",
    "ConfirmationError",
    "ConflictError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "ServerError",
    "UnprocessableError",
    "WaitTimeout",
    "WebhookVerificationError",
]

_PROBLEM_MEMBERS = ("type", "title", "status", "detail", "instance")


class AgeVerifyError(Exception):
    """Base class of every exception this client raises."""


class ApiConnectionError(AgeVerifyError):
    """The service could not be reached (or the connection broke) on every attempt."""


class ApiError(AgeVerifyError):
    """The service answered with an error status; its problem details are attributes.

    `type`, `title`, `status`, `detail` (and `instance`) are RFC 9457's members; `extra` holds every
    other member the service sent (`code`, `errors`, `requestId`, ...), and `problem` the whole document.
    """

    def __init__(self, problem: Mapping[str, Any], *, status: int, headers: Mapping[str, str] | None = None):
        self.problem: dict[str, Any] = dict(problem)
        self.status: int = status
        self.type: str = str(self.problem.get("type") or "about:blank")
        self.title: str | None = self.problem.get("title")
        self.detail: str | None = self.problem.get("detail")
        self.instance: str | None = self.problem.get("instance")
        self.extra: dict[str, Any] = {k: v for k, v in self.problem.items() if k not in _PROBLEM_MEMBERS}
        self.headers: dict[str, str] = dict(headers or {})
        super().__init__(self._message())

    @property
    def code(self) -> str | None:
        """The service's machine-readable error code (`validation_error`, `rate_limited`, ...)."""
        code = self.problem.get("code")
        return code if isinstance(code, str) else None

    @property
    def errors(self) -> list[dict[str, Any]]:
        """Field errors of a `validation_error`: `[{"field", "code", "message"}, ...]`."""
        errors = self.problem.get("errors")
        return list(errors) if isinstance(errors, list) else []

    @property
    def request_id(self) -> str | None:
        """The request's id (quote it to support); from the body or the `X-Request-Id` header."""
        request_id = self.problem.get("requestId")
        if isinstance(request_id, str):
            return request_id
        return next((v for k, v in self.headers.items() if k.lower() == "x-request-id"), None)

    def _message(self) -> str:
        text = f"{self.status} {self.title or 'error'}"
        if self.code:
            text += f" ({self.code})"
        if self.detail:
            text += f": {self.detail}"
        return text


class BadRequestError(ApiError):
    """400: the request was refused as invalid (`errors` lists the fields)."""


class AuthenticationError(ApiError):
    """401: missing, unknown or revoked API key."""


class PermissionDeniedError(ApiError):
    """403: for example the tenant is disabled."""


class NotFoundError(ApiError):
    """404: unknown session (or another tenant's, or another mode's)."""


class ConflictError(ApiError):
    """409: an idempotent request still in progress (after the retries), or a transition not allowed."""


class UnprocessableError(ApiError):
    """422: for example an `Idempotency-Key` reused with another body."""


class RateLimitError(ApiError):
    """429 after the retries; `retry_after` is how long the service asked to wait (seconds) if it said."""

    def __init__(
        self,
        problem: Mapping[str, Any],
        *,
        status: int,
        headers: Mapping[str, str] | None = None,
        retry_after: float | None = None,
    ):
        super().__init__(problem, status=status, headers=headers)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx after the retries (503 `service_unavailable` while the database or broker is down)."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableError,
}


def error_class_for(status: int) -> type[ApiError]:
    if status == 429:
        return RateLimitError
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, ApiError)


class WaitTimeout(AgeVerifyError):
    """`sessions.wait` ran out of time; `last` is the last result read (not final)."""

    def __init__(self, message: str, last: Any):
        super().__init__(message)
        self.last = last


class ConfirmationError(AgeVerifyError):
    """`sessions.confirm`: the session does not grant what the caller asked for; `result` is what was read."""

    def __init__(self, message: str, result: Any):
        super().__init__(message)
        self.result = result


class WebhookVerificationError(AgeVerifyError):
    """The webhook's signature, timestamp or body did not verify: answer it with 400 and ignore it."""
