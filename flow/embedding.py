"""SDK mode in the flow: the frame document, the begin step binding it to a session, one-time launch codes.

The frame document (GET /flow/embed) may be framed only by the one origin it is opened for, which must be
one of the publishable key's allowed origins (CSP frame-ancestors, enforced by the browser). Its script
waits for a `begin` message from its parent (or opener, for the popup fallback), checked by exact origin
and source, and posts the client secret to POST /flow/embed/begin, which checks the secret, the session's
expiry and mode, and the parent origin against the allowlist again, then sets the flow cookie for that channel. In
a frame the flow's cookies become `SameSite=None; Secure; Partitioned` and every page's
frame-ancestors is the one parent origin bound at begin (EmbeddedFlowMiddleware).
"""

import json
import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from sessions_api.client_access import (
    ClientAccessRefused,
    client_secret_for,
    client_session_create,
    client_session_creation_refused,
    launch_code_issue,
    launch_code_redeem,
    launch_url,
    session_for_client_secret,
    session_open_for_client,
)
from sessions_api.subjects import subject_problem
from tenants.client_settings import origin_normalize
from tenants.selectors import publishable_key_resolve

from .cookie import COOKIE_NAME, cookie_attributes_cross_site, flow_cookie_read, flow_cookie_set
from .errors import error_page
from .headers import CONTENT_SECURITY_POLICY, flow_headers, no_referrer
from .language import language_cookie_set, language_from_link, supported_language
from .navigation import SeeOther, outage_safe

FRAME_CHANNELS = {"frame": "embed", "popup": "popup"}  # the SDK's word -> the flow cookie's channel
_NO_FRAMING = "frame-ancestors 'none'"
# The site-wide same-origin opener policy would cut a popup off from the SDK's page that opened it.
POPUP_OPENER_POLICY = "unsafe-none"
_MAX_BODY = 4096


# What a Content-Security-Policy source may be here, checked again as it is written: whatever a stored or
# signed value holds, only scheme://host[:port] (a DNS name or an IPv4 or bracketed IPv6 address) gets in.
_PLAIN_ORIGIN = re.compile(r"https?://(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?")


def frame_ancestors(origins) -> str:
    plain = [origin for origin in origins if _PLAIN_ORIGIN.fullmatch(origin)]
    return "frame-ancestors " + (" ".join(plain) if plain else "'none'")


def _remember_language(response, language: str | None, *, cross_site: bool) -> None:
    """The SDK's `locale`, remembered for the pages that follow, as the start link's `locale` is."""
    if language:
        language_cookie_set(response, language)
        if cross_site:
            cookie_attributes_cross_site(response, settings.LANGUAGE_COOKIE_NAME)


def _embedded_headers(response, origins) -> None:
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY.replace(_NO_FRAMING, frame_ancestors(origins))
    response.xframe_options_exempt = True


@require_GET
@outage_safe
def embed_frame(request):
    """The frame (or popup) document the SDK opens: nothing of a session until the parent sends `begin`.

    For an origin the key does not allow (or a key that does not exist), the page says only that
    (origin_not_allowed, invalid_publishable_key), to that claimed origin alone: framing is allowed for
    it, so that the SDK hears why before it draws anything.
    """
    language_from_link(request)  # the page itself speaks the SDK's `locale`; begin remembers it
    key = publishable_key_resolve(request.GET.get("key", ""))
    parent_origin = request.GET.get("origin", "")
    channel = request.GET.get("channel", "frame")
    if channel not in FRAME_CHANNELS or not _is_origin(parent_origin):
        return error_page(request, "embed_refused")
    allowed = key is not None and parent_origin in key.allowed_origins
    if key is None:
        refusal, detail = (
            "invalid_publishable_key",
            ("This publishable key is unknown or has been revoked: copy a current one from the dashboard (SDK keys)."),
        )
    elif not allowed:
        refusal, detail = (
            "origin_not_allowed",
            (
                f"The origin {parent_origin} is not allowed for this publishable key: "
                "add it to the key's allowed origins in the dashboard (SDK keys)."
            ),
        )
    else:
        refusal, detail = "", ""
    response = flow_headers(
        render(
            request,
            "flow/embed.html",
            {
                "parent_origin": parent_origin,
                "channel": channel,
                "publishable_key": key.key if key else "",
                "locale": supported_language(request.GET.get("locale", "")) or "",
                "is_sandbox": key is not None and key.mode == "test",
                "refusal": refusal,
                "refusal_detail": detail,
            },
        )
    )
    # The popup is a top-level window: nothing may frame it, but it must keep its opener to answer it.
    # Only the origin that embeds it: listing every allowed origin would tell anyone holding the public key
    # and one origin all the others (staging hosts).
    ancestors = [] if channel == "popup" else [parent_origin]
    _embedded_headers(response, ancestors)
    if channel == "popup":
        response["Cross-Origin-Opener-Policy"] = POPUP_OPENER_POLICY
    return response


def _is_origin(value: str) -> bool:
    try:
        return origin_normalize(value) == value
    except ValidationError:
        return False


def _refusal(code: str, detail: str, status: int) -> JsonResponse:
    return JsonResponse({"code": code, "detail": detail}, status=status)


def _checked_request(request):
    """(key, body, parent origin, channel) of a frame's JSON request, or the refusal to answer."""
    if request.headers.get("Origin") != request.build_absolute_uri("/").rstrip("/") or len(request.body) > _MAX_BODY:
        return _refusal("forbidden", "Only the flow's own frame may call this.", 403)
    try:
        data = json.loads(request.body)
        raw_key, parent_origin = str(data["key"]), str(data["origin"])
        channel = str(data.get("channel", "frame"))
    except (ValueError, KeyError, TypeError):
        return _refusal("bad_request", "Send key and origin as JSON.", 400)
    key = publishable_key_resolve(raw_key)
    if key is None:
        return _refusal("invalid_publishable_key", "This publishable key is unknown or revoked.", 401)
    if parent_origin not in key.allowed_origins or channel not in FRAME_CHANNELS:
        return _refusal(
            "origin_not_allowed", f"The origin {parent_origin} is not allowed for this publishable key.", 403
        )
    return key, data, parent_origin, channel


@csrf_exempt  # the client secret in the body is the credential; a page without it can do nothing here
@require_POST
@outage_safe
def embed_begin(request):
    checked = _checked_request(request)
    if isinstance(checked, JsonResponse):
        return checked
    key, data, parent_origin, channel = checked
    language = supported_language(str(data.get("locale") or ""))
    created_secret = ""
    try:
        if isinstance(data.get("session"), dict):
            refused = client_session_creation_refused(request, key.pk)
            if refused is not None:
                return _refusal(
                    "rate_limited", f"Too many sessions created from clients. Retry in {refused.retry_after} s.", 429
                )
            subject = data["session"].get("subject")
            problem = subject_problem(subject)  # the partner API's rule (sessions_api.subjects)
            if problem is not None:
                return _refusal("invalid_subject", f"subject {problem[1]}.", 400)
            created = client_session_create(key=key, subject=subject)
            session, created_secret = created.session, client_secret_for(created.session, created.token)
        else:
            session = session_for_client_secret(key=key, client_secret=str(data.get("clientSecret", "")))
        session = session_open_for_client(session)
    except ClientAccessRefused as refusal:
        return _refusal(refusal.code, refusal.detail, refusal.status)
    # A session the frame created itself: its secret goes back to the SDK, for a popup if storage is blocked.
    response = JsonResponse({"next": reverse("flow:consent"), "mode": session.mode, "clientSecret": created_secret})
    response["Cache-Control"] = "no-store"
    flow_cookie_set(response, session, channel=FRAME_CHANNELS[channel], target=parent_origin)
    _remember_language(response, language, cross_site=channel == "frame")
    return response


@csrf_exempt  # as embed_begin: the client secret in the body is the credential
@require_POST
@outage_safe
def embed_launch(request):
    """A frame whose storage is blocked asks for a one-time launch URL for a top-level redirect."""
    checked = _checked_request(request)
    if isinstance(checked, JsonResponse):
        return checked
    key, data, _, _ = checked
    try:
        session = session_open_for_client(
            session_for_client_secret(key=key, client_secret=str(data.get("clientSecret", "")))
        )
    except ClientAccessRefused as refusal:
        return _refusal(refusal.code, refusal.detail, refusal.status)
    return_url = str(data.get("returnUrl") or "")
    if return_url and return_url not in key.return_urls:
        return _refusal("return_url_not_registered", f"{return_url} is not a registered return URL of this key.", 400)
    issued = launch_code_issue(session=session, return_url=return_url)
    response = JsonResponse({"launchUrl": launch_url(issued.code)})
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@no_referrer
@outage_safe
def launch(request):
    """A one-time launch code (60 s) exchanged for the first-party flow cookie, as /flow/start does."""
    language = language_from_link(request)
    code = launch_code_redeem(request.GET.get("code", ""))
    if code is None:
        response = error_page(request, "launch_invalid")
    else:
        try:
            session = session_open_for_client(code.session)
        except ClientAccessRefused:
            response = error_page(
                request, "session_finished" if code.session.is_final else "link_expired", session=code.session
            )
        else:
            response = flow_headers(SeeOther(reverse("flow:consent")))
            flow_cookie_set(response, session, channel="launch", target=code.return_url)
    _remember_language(response, language, cross_site=False)
    return response


def flow_channel(request) -> dict:
    """Template context: which channel the flow runs in and the one origin its messages may go to."""
    if not request.path.startswith("/flow/"):
        return {}
    cookie = flow_cookie_read(request)
    if cookie is None:
        return {"flow_channel": "web", "flow_target_origin": ""}
    return {"flow_channel": cookie.channel, "flow_target_origin": cookie.target if cookie.messages_parent else ""}


class EmbeddedFlowMiddleware:
    """In a frame: the flow's cookies (and Django's CSRF cookie) cross-site, framing allowed for the bound parent only.

    In a popup: the opener is kept, so the result page can post its message to the SDK's page.
    Sits outside CsrfViewMiddleware, so it sees the CSRF cookie that middleware sets.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if not request.path.startswith("/flow/"):
            return response
        cookie = flow_cookie_read(request)
        if cookie is not None and cookie.channel == "popup":
            response["Cross-Origin-Opener-Policy"] = POPUP_OPENER_POLICY
        if cookie is None or not cookie.embedded:
            return response
        for name in (COOKIE_NAME, settings.CSRF_COOKIE_NAME, settings.LANGUAGE_COOKIE_NAME):
            if name in response.cookies and response.cookies[name].value:
                cookie_attributes_cross_site(response, name)
        if _NO_FRAMING in response.get("Content-Security-Policy", ""):
            _embedded_headers(response, [cookie.target])
        return response
