"""Request ids on every response, and problem details for anything under /v1/ that a view did not answer."""
import logging
import re

from tenants.identifiers import prefixed_ulid

from .problems import internal_error, is_backend_outage, problem_response, service_unavailable

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
