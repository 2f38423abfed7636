"""The flow cookie `av_flow`: a signed, salted value naming the one session this browser may work on."""
from django.conf import settings
from django.core import signing
from django.utils import timezone

COOKIE_NAME = "av_flow"
COOKIE_SALT = "ageverify.flow.session"
COOKIE_PATH = "/flow/"
# A session lives at most 7 days (tenant TTL cap); the cookie's own max-age stops it earlier.
_SIGNATURE_MAX_AGE = 8 * 24 * 3600


def flow_cookie_set(response, session) -> None:
    remaining = int((session.expires_at - timezone.now()).total_seconds())
    response.set_signed_cookie(
        COOKIE_NAME, session.id, salt=COOKIE_SALT, max_age=max(remaining, 1), path=COOKIE_PATH,
        httponly=True, secure=not settings.DEBUG, samesite="Lax",
    )


def flow_cookie_session_id(request) -> str | None:
    """The session id the cookie names, or None when it is absent, tampered with or too old."""
    try:
        return request.get_signed_cookie(COOKIE_NAME, default=None, salt=COOKIE_SALT, max_age=_SIGNATURE_MAX_AGE)
    except signing.BadSignature:
        return None
