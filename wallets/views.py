"""The two addresses a phone's wallet calls for a cross-device request (OpenID4VP 1.0 by reference).

  GET|POST /wallet/openid4vp/request/<id>   the signed request object, once (`application/oauth-authz-req+jwt`);
                                            POST (request_uri_method=post) may carry `wallet_nonce`
  POST     /wallet/openid4vp/response/<id>  the answer, `direct_post.jwt`: form field `response`, a JWE

No cookie and no API key: the request id is unguessable and single-use, and an answer decrypts only
under its own request's key. Refusals are OAuth error objects (`error`, `error_description` = our code).
"""

import logging

from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from checks.digital_id.cross_device import (
    MAX_RESPONSE_BODY,
    MAX_WALLET_BODY,
    REQUEST_OBJECT_MEDIA_TYPE,
    RequestUriRefused,
    direct_post_read,
    wallet_nonce_read,
)
from checks.digital_id.refusals import RequestUriRefusal
from core.outages import outage_answered

from .cross_device import cross_device_answer, cross_device_request_fetch

logger = logging.getLogger(__name__)
FORM = "application/x-www-form-urlencoded"
RETRY_AFTER_SECONDS = 5


def _unavailable(request):
    """A database or broker outage answers the wallet OAuth's `temporarily_unavailable`, never an HTML page."""
    response = JsonResponse({"error": "temporarily_unavailable"}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return _no_store(response)


_outage_safe = outage_answered(_unavailable, logger=logger, where="wallet")


def _no_store(response):
    response["Cache-Control"] = "no-store"
    return response


def _refused(refused: RequestUriRefused):
    return _no_store(JsonResponse({"error": refused.error, "error_description": refused.code}, status=refused.status))


def _form_body(request, limit: int) -> bytes:
    if int(request.headers.get("Content-Length") or 0) > limit:
        raise RequestUriRefused(RequestUriRefusal.MALFORMED, status=413)
    if request.body and request.content_type != FORM:
        raise RequestUriRefused(RequestUriRefusal.MALFORMED, status=415)
    return request.body


@csrf_exempt
@require_http_methods(["GET", "POST"])
@_outage_safe
def request_object(request, request_id: str):
    try:
        wallet_nonce = wallet_nonce_read(_form_body(request, MAX_WALLET_BODY)) if request.method == "POST" else None
        signed = cross_device_request_fetch(request_id=request_id, wallet_nonce=wallet_nonce)
    except RequestUriRefused as refused:
        return _refused(refused)
    return _no_store(HttpResponse(signed, content_type=REQUEST_OBJECT_MEDIA_TYPE))


@csrf_exempt
@require_POST
@_outage_safe
def response(request, request_id: str):
    try:
        data = direct_post_read(_form_body(request, MAX_RESPONSE_BODY))
        cross_device_answer(request_id=request_id, data=data)
    except RequestUriRefused as refused:
        return _refused(refused)
    return _no_store(JsonResponse({}))  # OpenID4VP 8.2: 200 and JSON; no redirect_uri, the desktop page follows
