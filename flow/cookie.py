"""The flow cookie `av_flow`: a signed, salted value naming the one session this browser may work on.

It also names the channel the flow was opened through, and that channel's target:
  * `web`: the partner's redirect (GET /flow/start); the result page returns to callback_url/cancel_url.
  * `embed`: a frame in the partner's page (SDK mode); the target is the parent's origin, the only
    origin that may frame the pages and receive their messages. The cookie is then
    `SameSite=None; Secure; Partitioned`, so the browser sends it inside the cross-site frame
    (keyed to that top-level site, never shared with other sites).
  * `popup`: a window the SDK opened; the target is the opener's origin.
  * `launch`: a one-time launch code (top-level or an in-app browser tab); the target is the
    registered return URL, if any.
"""

from dataclasses import dataclass

from django.conf import settings
from django.core import signing
from django.utils import timezone

COOKIE_NAME = "av_flow"
COOKIE_SALT = "ageverify.flow.session"
COOKIE_PATH = "/flow/"
CHANNELS = ("web", "embed", "popup", "launch")
# A session lives at most 7 days (tenant TTL cap); the cookie's own max-age stops it earlier.
_SIGNATURE_MAX_AGE = 8 * 24 * 3600
_SEPARATOR = "|"


@dataclass(frozen=True)
class FlowCookie:
    session_id: str
    channel: str = "web"
    target: str = ""

    @property
    def embedded(self) -> bool:
        return self.channel == "embed"

    @property
    def messages_parent(self) -> bool:
        """The result goes to the SDK by postMessage instead of a redirect."""
        return self.channel in ("embed", "popup")


def cookie_attributes_cross_site(response, name: str) -> None:
    """Make a cookie already on `response` work inside a cross-site frame: SameSite=None; Secure; Partitioned."""
    morsel = response.cookies[name]
    morsel["secure"] = True
    # Python's cookie module (before 3.14) has no Partitioned attribute; it follows SameSite's value.
    morsel["samesite"] = "None; Partitioned"


def flow_cookie_set(response, session, *, channel: str = "web", target: str = "") -> None:
    if channel not in CHANNELS or _SEPARATOR in channel:
        raise ValueError(f"unknown flow channel {channel!r}")
    remaining = int((session.expires_at - timezone.now()).total_seconds())
    value = session.id if channel == "web" else _SEPARATOR.join((session.id, channel, target))
    response.set_signed_cookie(
        COOKIE_NAME,
        value,
        salt=COOKIE_SALT,
        max_age=max(remaining, 1),
        path=COOKIE_PATH,
        httponly=True,
        secure=not settings.DEBUG,
        samesite="Lax",
    )
    if channel == "embed":
        cookie_attributes_cross_site(response, COOKIE_NAME)


def flow_cookie_read(request) -> FlowCookie | None:
    """The cookie's session and channel, or None when it is absent, tampered with or too old.

    Checked once per request: the view, the template context and the embedding middleware all ask.
    """
    if not hasattr(request, "_flow_cookie"):
        request._flow_cookie = _flow_cookie_verified(request)
    return request._flow_cookie


def _flow_cookie_verified(request) -> FlowCookie | None:
    try:
        value = request.get_signed_cookie(COOKIE_NAME, default=None, salt=COOKIE_SALT, max_age=_SIGNATURE_MAX_AGE)
    except signing.BadSignature:
        return None
    if not value:
        return None
    session_id, _, rest = value.partition(_SEPARATOR)
    channel, _, target = rest.partition(_SEPARATOR)
    return FlowCookie(session_id=session_id, channel=channel or "web", target=target)


def flow_cookie_session_id(request) -> str | None:
    """The session id the cookie names, or None when it is absent, tampered with or too old."""
    cookie = flow_cookie_read(request)
    return cookie.session_id if cookie else None
