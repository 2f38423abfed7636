"""GET /ops/pipeline: the pipeline's health for operators and their monitoring (200 ok, 503 failing).

Readable by a signed-in operator (staff) or with `Authorization: Bearer <PIPELINE_STATUS_TOKEN>`;
anyone else gets a 404, as if it did not exist. Load balancers keep using /readyz, which stays
about the web process itself: a web server must not leave the pool because a worker died.
"""

import hmac

from django.conf import settings
from django.http import Http404, JsonResponse
from django.views.decorators.http import require_GET

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
    if not _is_operator(request):
        raise Http404
    status = pipeline_status()
    response = JsonResponse(status, status=200 if status["status"] == "ok" else 503)
    response["Cache-Control"] = "no-store"
    return response
