"""The digital-ID step's JSON endpoints, bound to the flow cookie like the uploads.

  POST /flow/digital-id/request      a new single-use request: {"requestId", "digital"} for navigator.credentials.get
  POST /flow/digital-id/response     {"requestId", "protocol", "data"}: the wallet's answer, verified and decided
  POST /flow/digital-id/test-wallet  sandbox only, {"requestId", "over"}: the built-in test issuer's answer
  POST /flow/digital-id/phone        a new cross-device request: {"requestId", "link", "qrSvg"} for a phone's wallet
  POST /flow/digital-id/phone/progress  {"requestId"}: {"state", "message", "next"} while the page shows the code

Every answer is JSON; a session not at a step that offers it gets 409 with the page it belongs on.
"""

import json
from functools import wraps

import segno
from django.http import HttpResponse, JsonResponse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_POST

from sessions_api.choices import Status
from sessions_api.selectors import session_get
from wallets.cross_device import cross_device_progress, cross_device_request_create
from wallets.digital_id import (
    DigitalIdUnavailable,
    digital_id_request_create,
    digital_id_submit,
    sandbox_wallet_answer,
)

from .age_pass import save_right_grant
from .headers import flow_headers
from .navigation import flow_session, outage_safe, page_url_for

MAX_BODY_BYTES = 256 * 1024  # the verifier caps the decoded presentation far below this
MESSAGE_UNAVAILABLE = _("A digital ID cannot be used for this verification any more. Please use another way.")


def _json(body: dict, status: int = 200):
    return flow_headers(JsonResponse(body, status=status))


def digital_id_endpoint(view):
    """CSRF-checked POST with the cookie's session at a step offering a digital ID, the JSON body parsed."""

    @require_POST
    @csrf_protect
    @outage_safe
    @wraps(view)
    def wrapper(request):
        session = flow_session(request)
        if session is None:
            return _json({"error": "no_session"}, 403)
        if session.status not in (Status.INITIATED, Status.REQUIRES_DOC):
            return _json({"error": "wrong_step", "next": page_url_for(session)}, 409)
        if int(request.headers.get("Content-Length") or 0) > MAX_BODY_BYTES:
            return _json({"error": "too_large"}, 413)
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return _json({"error": "malformed_json"}, 400)
        try:
            answer = view(request, session, body)
            return answer if isinstance(answer, HttpResponse) else _json(answer)
        except DigitalIdUnavailable:
            return _json(
                {"error": "unavailable", "message": str(MESSAGE_UNAVAILABLE), "next": page_url_for(session)}, 409
            )

    return wrapper


@digital_id_endpoint
def request_create(request, session, body):
    request_id, digital = digital_id_request_create(session=session)
    return {"requestId": request_id, "digital": digital}


@digital_id_endpoint
def response_submit(request, session, body):
    outcome = digital_id_submit(
        session=session, request_id=body.get("requestId"), protocol=body.get("protocol"), data=body.get("data")
    )
    session = session_get(session_id=session.id)
    if outcome.message:  # stored in English by the service, shown in the page's language
        return {
            "status": outcome.status,
            "message": gettext(outcome.message) % {"age_limit": session.age_limit},
            "next": None,
        }
    response = _json({"status": outcome.status, "message": None, "next": page_url_for(session)})
    if session.status == Status.APPROVED:  # this browser's wallet answer approved the session
        save_right_grant(request, response, session)
    return response


@digital_id_endpoint
def test_wallet(request, session, body):
    if not isinstance(body.get("over"), bool):
        raise DigitalIdUnavailable(session.id)
    return sandbox_wallet_answer(session=session, request_id=body.get("requestId"), over=body["over"])


def _qr_svg(link: str) -> str:
    """The link as an inline SVG QR code (no script, no external resource: the flow's CSP holds)."""
    title = gettext("QR code for your wallet app")
    return segno.make(link, error="m").svg_inline(scale=4, border=4, title=title, dark="#000", light="#fff")


@digital_id_endpoint
def phone_request(request, session, body):
    created = cross_device_request_create(session=session)
    return {"requestId": created.request_id, "link": created.link, "qrSvg": _qr_svg(created.link)}


@digital_id_endpoint
def phone_progress(request, session, body):
    request_id = body.get("requestId")
    if not isinstance(request_id, str):
        return _json({"error": "malformed_json"}, 400)
    progress = cross_device_progress(session=session, request_id=request_id)
    message = gettext(progress.message) % {"age_limit": session.age_limit} if progress.message else None
    return {"state": progress.state, "message": message, "next": None}
