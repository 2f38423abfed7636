"""Age passes in the hosted flow: save one after an approval, use one on the first page, see or delete one.

  POST /flow/age-pass/save/options    WebAuthn creation options for the approved session (result page)
  POST /flow/age-pass/save            {"credential"}: the new passkey, verified and stored with what was proved
  POST /flow/age-pass/use/options     WebAuthn request options bound to the open session (first page)
  POST /flow/age-pass/use             {"credential"}: approved with reason age_pass, or why not
  GET  /flow/age-pass/                the user's own page: show or delete the pass with the passkey itself
  POST /flow/age-pass/manage/options  request options for that page (bound to no session)
  POST /flow/age-pass/manage          {"credential", "action": "show" | "delete"}

Every answer is JSON; the checks themselves are age_passes.services' (py_webauthn).
"""

import json
from functools import wraps

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext, gettext_noop
from django.views.decorators.csrf import csrf_protect, ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_POST

from age_passes.services import (
    MESSAGE_RATE_LIMITED,
    AgePassRefused,
    AgePassUnavailable,
    age_pass_authentication_options,
    age_pass_manage,
    age_pass_registration_options,
    age_pass_save,
    age_pass_save_right_issue,
    age_pass_use,
)
from core.client_address import client_address
from core.rate_limit import bucket_take
from sessions_api.selectors import session_get

from .cookie import COOKIE_PATH, cookie_attributes_cross_site, flow_cookie_read
from .headers import flow_headers
from .navigation import flow_session, outage_safe, page_url_for

MAX_BODY_BYTES = 64 * 1024  # a passkey's answer is a few kilobytes
# In English here, translated where shown (age_pass_endpoint), as age_passes.services' messages.
MESSAGE_NO_CREDENTIAL = gettext_noop("Your age pass could not be checked. Please try again.")
MESSAGE_UNKNOWN_ACTION = gettext_noop("Choose show or delete.")
SAVE_RIGHT_COOKIE = "av_pass_save"
SAVE_RIGHT_MAX_AGE = 24 * 3600  # the right is checked against the approval's time; the cookie just outlives it
# The user's own page is anonymous: each ask stores a challenge, so an address gets a few asks, then one a minute.
MANAGE_BURST_PER_ADDRESS = 10
MANAGE_RATE_PER_ADDRESS = 1 / 60


def _json(body: dict, status: int = 200):
    return flow_headers(JsonResponse(body, status=status))


def _body(request):
    if int(request.headers.get("Content-Length") or 0) > MAX_BODY_BYTES:
        return None
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def save_right_grant(request, response, session) -> None:
    """Give the browser of this request, which completed a step that may approve `session`, the right to save
    a pass after the approval: a secret in an HttpOnly cookie, replacing any earlier one."""
    secret = age_pass_save_right_issue(session=session)
    if secret is None:
        return
    response.set_cookie(
        SAVE_RIGHT_COOKIE,
        secret,
        max_age=SAVE_RIGHT_MAX_AGE,
        path=COOKIE_PATH,
        httponly=True,
        secure=not settings.DEBUG,
        samesite="Lax",
    )
    cookie = flow_cookie_read(request)
    if cookie is not None and cookie.embedded:
        cookie_attributes_cross_site(response, SAVE_RIGHT_COOKIE)


def save_right_read(request) -> str | None:
    return request.COOKIES.get(SAVE_RIGHT_COOKIE)


def _manage_wait(request) -> int | None:
    """Seconds to wait when this address is over the own page's limit; None when it may go on (or Redis is away)."""
    state = bucket_take(
        f"age-pass-manage:address:{client_address(request) or 'unknown'}",
        rate=MANAGE_RATE_PER_ADDRESS,
        burst=MANAGE_BURST_PER_ADDRESS,
    )
    return state.retry_after if state is not None and not state.allowed else None


def age_pass_endpoint(*, needs_session: bool = True):
    """CSRF-checked POST with a JSON body, and the cookie's session when `needs_session`; without a session
    (the user's own page) the client address's token bucket is checked first (429 with Retry-After)."""

    def decorate(view):
        @require_POST
        @csrf_protect
        @outage_safe
        @wraps(view)
        def wrapper(request):
            if not needs_session and (wait := _manage_wait(request)) is not None:
                response = _json({"error": "rate_limited", "message": gettext(MESSAGE_RATE_LIMITED)}, 429)
                response["Retry-After"] = str(wait)
                return response
            session = flow_session(request) if needs_session else None
            if needs_session and session is None:
                return _json({"error": "no_session"}, 403)
            body = _body(request)
            if body is None:
                return _json({"error": "malformed_json"}, 400)
            try:
                return _json(view(request, session, body))
            except AgePassUnavailable:
                return _json({"error": "unavailable", "next": page_url_for(session) if session else None}, 409)
            except AgePassRefused as refused:
                return _json({"error": refused.code, "message": gettext(refused.message)}, refused.status)

        return wrapper

    return decorate


def _credential(body: dict):
    credential = body.get("credential")
    if not isinstance(credential, dict):
        raise AgePassRefused("malformed", MESSAGE_NO_CREDENTIAL)
    return credential


@age_pass_endpoint()
def save_options(request, session, body):
    return {"publicKey": age_pass_registration_options(session=session, save_right=save_right_read(request))}


@age_pass_endpoint()
def save(request, session, body):
    saved = age_pass_save(session=session, save_right=save_right_read(request), credential=_credential(body))
    return {"saved": True, "expiresOn": saved.expires_on.isoformat(), "thresholds": saved.thresholds}


@age_pass_endpoint()
def use_options(request, session, body):
    return {"publicKey": age_pass_authentication_options(session=session)}


@age_pass_endpoint()
def use(request, session, body):
    outcome = age_pass_use(session=session, credential=_credential(body))
    session = session_get(session_id=session.id)
    if outcome.approved:
        return {"approved": True, "next": page_url_for(session)}
    message = gettext(outcome.message) % {"age_limit": session.age_limit}
    return {"approved": False, "code": outcome.code, "message": message, "next": None}


@require_GET
@ensure_csrf_cookie
@outage_safe
def manage_page(request):
    return flow_headers(render(request, "age_passes/manage.html", {}))


@age_pass_endpoint(needs_session=False)
def manage_options(request, session, body):
    return {"publicKey": age_pass_authentication_options(session=None, purpose="manage")}


@age_pass_endpoint(needs_session=False)
def manage(request, session, body):
    action = body.get("action")
    if action not in ("show", "delete"):
        raise AgePassRefused("unknown_action", MESSAGE_UNKNOWN_ACTION)
    age_pass = age_pass_manage(credential=_credential(body), delete=action == "delete")
    if age_pass is None:
        return {"deleted": True}
    return {
        "pass": {
            "method": age_pass.method,
            "provedOn": age_pass.proved_on.isoformat(),
            "expiresOn": age_pass.expires_on.isoformat(),
            "thresholds": age_pass.thresholds,
            "revoked": age_pass.revoked_at is not None,
        }
    }
