"""Request ids on every response, problem details for anything under /v1/ that a view did not answer, chunked bodies."""

import io
import logging
import re

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream

from core.identifiers import prefixed_ulid
from core.outages import is_backend_outage

from .problems import internal_error, problem_response, service_unavailable

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-Id"
_VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
API_PREFIX = "/v1/"
# Django's own 4xx answers (before or outside DRF) and the problem each becomes.
_DJANGO_ANSWERS = {
    400: ("bad_request", "The request could not be understood."),
    403: ("forbidden", "The request is not allowed."),
    404: ("not_found", "No such endpoint."),
    405: ("method_not_allowed", "Method not allowed."),
    413: ("payload_too_large", "The request body is too large."),
}


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request.request_id = incoming if _VALID_REQUEST_ID.fullmatch(incoming) else prefixed_ulid("req")
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request.request_id
        return response


class ApiProblemMiddleware:
    """Under /v1/, Django's own HTML answers (unknown path, uncaught error, database down) become problems."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX) or response.get("Content-Type", "").startswith(
            ("application/problem+json", "application/json", "application/vnd.oai")
        ):
            return response
        if 400 <= response.status_code < 500:
            code, detail = _DJANGO_ANSWERS.get(response.status_code, ("bad_request", "The request was refused."))
            problem = problem_response(request, status_code=response.status_code, code=code, detail=detail)
            if response.has_header("Allow"):
                problem["Allow"] = response["Allow"]
            return problem
        if response.status_code >= 500:
            return internal_error(request)
        return response

    def process_exception(self, request, exception):
        if not request.path.startswith(API_PREFIX):
            return None
        if is_backend_outage(exception):
            logger.warning("backend unavailable on %s: %s", request.path, exception)
            return service_unavailable(request)
        logger.exception("unhandled error on %s", request.path, exc_info=exception)
        return internal_error(request)


class ChunkedBodyMiddleware:
    """Under /v1/, a body sent without Content-Length (`Transfer-Encoding: chunked`) is read like any other.

    Django reads exactly CONTENT_LENGTH bytes, so such a body used to look empty ("The request body
    is empty.") and was never held to the 16 KiB cap. gunicorn, uWSGI and mod_wsgi de-chunk it and
    set `wsgi.input_terminated`; then at most cap + 1 bytes are buffered and given a length, and the
    parser's usual checks (413 past the cap) apply. A server that does not de-chunk gets 411.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        chunked = "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and request.path.startswith(API_PREFIX) and not request.META.get("CONTENT_LENGTH"):
            if not request.META.get("wsgi.input_terminated"):
                return problem_response(
                    request,
                    status_code=411,
                    code="length_required",
                    detail="Send the body with a Content-Length header.",
                )
            body = _read_at_most(request.META["wsgi.input"], settings.API_MAX_BODY_BYTES + 1)
            request.META["CONTENT_LENGTH"] = str(len(body))
            request._stream = LimitedStream(io.BytesIO(body), len(body))
        return self.get_response(request)


def _read_at_most(stream, limit: int) -> bytes:
    parts, size = [], 0
    while size < limit:
        part = stream.read(limit - size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)
