"""GET /ops/pipeline: the pipeline's health for operators and their monitoring (200 ok, 503 failing).

With PostgreSQL unreachable it answers 503 `{"status": "unavailable", ...}` with Retry-After, never a traceback.

Readable by a signed-in operator (staff) or with `Authorization: Bearer <PIPELINE_STATUS_TOKEN>`;
anyone else gets a 404, as if it did not exist. Load balancers keep using /readyz, which stays
about the web process itself: a web server must not leave the pool because a worker died.
"""

import hmac

from django.conf import settings
from django.http import Http404, JsonResponse
from django.views.decorators.http import require_GET

from core.outages import SERVICE_UNAVAILABLE_RETRY_AFTER, is_backend_outage

from .selectors import pipeline_status


def _is_operator(request) -> bool:
    user = getattr(request, "user", None)
    if user is not None and user.is_active and user.is_staff:
        return True
    token = settings.PIPELINE_STATUS_TOKEN
    given = request.headers.get("Authorization", "")
    return bool(token) and hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


@require_GET
def pipeline_status_view(request):
    try:
        if not _is_operator(request):  # a signed-in operator's session is read from the database too
            raise Http404
        status = pipeline_status()
    except Http404:
        raise
    except Exception as error:
        if not is_backend_outage(error):
            raise
        # The database is what every check reads: say so, short, for the monitoring that polls this.
        response = JsonResponse({"status": "unavailable", "detail": "the database is unreachable"}, status=503)
        response["Retry-After"] = str(SERVICE_UNAVAILABLE_RETRY_AFTER)
        response["Cache-Control"] = "no-store"
        return response
    response = JsonResponse(status, status=503 if status["status"] == "failing" else 200)
    response["Cache-Control"] = "no-store"
    return response
