"""RFC 9457 problem details: the one error format of the API (CONTRACT 2), for every failure under /v1/."""

import logging
import math

from django.http import Http404, JsonResponse
from rest_framework import exceptions, status

from core.outages import SERVICE_UNAVAILABLE_RETRY_AFTER, is_backend_outage

logger = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"
TYPE_BASE = "https://docs.ageverify.dev/errors/"
TITLES = {
    "malformed_json": "Malformed JSON",
    "validation_error": "Invalid request",
    "missing_api_key": "Missing API key",
    "invalid_api_key": "Invalid API key",
    "tenant_disabled": "Tenant disabled",
    "session_not_found": "Session not found",
    "not_found": "Not found",
    "method_not_allowed": "Method not allowed",
    "not_acceptable": "Not acceptable",
    "payload_too_large": "Payload too large",
    "length_required": "Length required",
    "unsupported_media_type": "Unsupported media type",
    "idempotency_key_in_use": "Idempotency key in use",
    "idempotency_key_reused": "Idempotency key reused",
    "invalid_transition": "Invalid transition",
    "session_final": "Session already final",
    "rate_limited": "Too many requests",
    "service_unavailable": "Service unavailable",
    "internal_error": "Internal server error",
    "missing_publishable_key": "Missing publishable key",
    "invalid_publishable_key": "Invalid publishable key",
    "secret_key_not_allowed": "Secret key sent from a client",
    "origin_not_allowed": "Origin not allowed",
    "invalid_client_secret": "Invalid client secret",
    "session_expired": "Session expired",
    "session_finished": "Session finished",
    "mode_mismatch": "Mode mismatch",
    "client_sessions_disabled": "Client sessions disabled",
    "return_url_not_registered": "Return URL not registered",
}


class ApiProblem(exceptions.APIException):
    """An API error with an explicit status, code and detail; rendered by `problem_exception_handler`."""

    def __init__(self, *, status_code: int, code: str, detail: str, errors: list | None = None, headers=None):
        super().__init__(detail=detail, code=code)
        self.status_code = status_code
        self.problem_code = code
        self.errors = errors
        self.headers = headers or {}


class PayloadTooLarge(ApiProblem):
    def __init__(self, limit: int):
        super().__init__(
            status_code=413, code="payload_too_large", detail=f"The request body is larger than {limit} bytes."
        )


def problem_response(
    request, *, status_code: int, code: str, detail: str, errors: list | None = None, headers: dict | None = None
) -> JsonResponse:
    body = {
        "type": TYPE_BASE + code,
        "title": TITLES.get(code, code.replace("_", " ").capitalize()),
        "status": status_code,
        "code": code,
        "detail": detail,
    }
    if errors is not None:
        body["errors"] = errors
    request_id = getattr(request, "request_id", None)
    if request_id:
        body["requestId"] = request_id
    response = JsonResponse(body, status=status_code, content_type=PROBLEM_CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def service_unavailable(request) -> JsonResponse:
    return problem_response(
        request,
        status_code=503,
        code="service_unavailable",
        detail="A backing service is unreachable. Retry shortly.",
        headers={"Retry-After": str(SERVICE_UNAVAILABLE_RETRY_AFTER)},
    )


def internal_error(request) -> JsonResponse:
    return problem_response(
        request,
        status_code=500,
        code="internal_error",
        detail="An unexpected error occurred. It has been logged; quote the requestId to support.",
    )


def _field_errors(detail, prefix: str = "") -> list[dict]:
    """Flatten DRF's nested error detail into the contract's `errors` list."""
    if isinstance(detail, dict):
        flat = []
        for field, value in detail.items():
            name = field if field != "non_field_errors" else ""
            flat.extend(_field_errors(value, f"{prefix}.{name}" if prefix and name else (prefix or name)))
        return flat
    if isinstance(detail, list):
        flat = []
        for item in detail:
            flat.extend(_field_errors(item, prefix))
        return flat
    code = getattr(detail, "code", "invalid")
    code = {"null": "invalid_type", "invalid": "invalid_type", "blank": "out_of_range"}.get(code, code)
    return [{"field": prefix or None, "code": code, "message": str(detail)}]


def _summary(errors: list[dict]) -> str:
    first = errors[0]
    text = f"{first['field']} {first['message']}" if first["field"] else first["message"]
    if len(errors) > 1:
        text += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
    return text


def problem_exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER: every exception raised in an API view becomes a problem response."""
    request = context.get("request")
    if isinstance(exc, ApiProblem):
        return problem_response(
            request,
            status_code=exc.status_code,
            code=exc.problem_code,
            detail=str(exc.detail),
            errors=exc.errors,
            headers=exc.headers,
        )
    if isinstance(exc, exceptions.ValidationError):
        errors = _field_errors(exc.detail)
        return problem_response(
            request, status_code=400, code="validation_error", detail=_summary(errors), errors=errors
        )
    if isinstance(exc, Http404):
        return problem_response(request, status_code=404, code="not_found", detail="No such resource.")
    if isinstance(exc, exceptions.Throttled):
        wait = max(1, math.ceil(exc.wait or 1))
        return problem_response(
            request,
            status_code=429,
            code="rate_limited",
            detail=f"Rate limit exceeded. Retry in {wait} second{'s' if wait != 1 else ''}.",
            headers={"Retry-After": str(wait)},
        )
    if isinstance(exc, exceptions.APIException):
        code = exc.get_codes()
        code = code if isinstance(code, str) else "error"
        code = {
            "parse_error": "malformed_json",
            "not_authenticated": "missing_api_key",
            "authentication_failed": "invalid_api_key",
            "unsupported_media_type": "unsupported_media_type",
        }.get(code, code)
        headers = {}
        if exc.status_code == status.HTTP_401_UNAUTHORIZED:
            headers["WWW-Authenticate"] = 'ApiKey header="X-API-Key"'
        return problem_response(
            request, status_code=exc.status_code, code=code, detail=str(exc.detail), headers=headers
        )
    if is_backend_outage(exc):
        logger.warning("backend unavailable: %s", exc)
        return service_unavailable(request)
    logger.exception("unhandled error in API view", exc_info=exc)
    return internal_error(request)
