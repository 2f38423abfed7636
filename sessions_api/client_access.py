"""SDK mode on the session side: client secrets, one-time launch codes, sessions created with a publishable key.

A client secret is `{sessionId}_secret_{sessionToken}`: the session id and its flow token, returned
once at creation beside `sessionToken`; no new secret is stored (only the token's hash, as before).
A launch code is a one-time, 60-second code that opens the flow in a top-level browser or an in-app
browser tab, so that no long-lived secret ever appears in an address.
"""

import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.utils import timezone

from core.client_address import client_address
from core.rate_limit import BucketState, bucket_take
from tenants.models import PublishableKey

from .choices import Reason
from .models import LaunchCode, VerificationSession
from .selectors import SessionNotFound, session_get
from .services import CreatedSession, session_create, session_token_hash

CLIENT_SECRET_SEPARATOR = "_secret_"
LAUNCH_CODE_TTL = timedelta(seconds=60)
_MAX_SECRET_LENGTH = 200


class ClientAccessRefused(Exception):
    """Why a client (browser/app) request is refused; `code` is one of the SDK's typed error codes."""

    def __init__(self, code: str, detail: str, status: int = 400):
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.status = status


def client_secret_for(session: VerificationSession, token: str) -> str:
    return f"{session.id}{CLIENT_SECRET_SEPARATOR}{token}"


def session_for_client_secret(*, key: PublishableKey, client_secret: str) -> VerificationSession:
    """The session a client secret opens for this publishable key (expired sessions finalized on the way).

    An unknown session, a wrong token and another tenant's session get the same answer.
    """
    invalid = ClientAccessRefused(
        "invalid_client_secret",
        "The client secret is not valid: pass session.clientSecret exactly as POST /v1/sessions returned it.",
        401,
    )
    session_id, _, token = (client_secret or "").partition(CLIENT_SECRET_SEPARATOR)
    if not token or len(client_secret) > _MAX_SECRET_LENGTH:
        raise invalid
    try:
        session = session_get(session_id=session_id)
    except SessionNotFound:
        raise invalid from None
    if not hmac.compare_digest(session_token_hash(token), session.token_hash) or session.tenant_id != key.tenant_id:
        raise invalid
    if session.mode != key.mode:
        raise ClientAccessRefused(
            "mode_mismatch",
            f"This session was created with a {session.mode} secret key but the publishable key is a {key.mode} "
            f"key: use av_pk_{session.mode}_... with {session.mode} sessions.",
            400,
        )
    return session


def session_open_for_client(session: VerificationSession) -> VerificationSession:
    """The session if the flow may still run; session_expired / session_finished otherwise."""
    if session.reason == Reason.EXPIRED or session.expires_at <= timezone.now():
        raise ClientAccessRefused("session_expired", "This session has expired: create a new one on your backend.", 410)
    if session.is_final:
        raise ClientAccessRefused(
            "session_finished",
            f"This session is already {session.status}: read its result on your backend with GET /v1/sessions/{{id}}.",
            409,
        )
    return session


def client_session_create(*, key: PublishableKey, subject: str) -> CreatedSession:
    """Opt-in per key: the age limit and every URL come from the key, never from the browser."""
    if not key.client_sessions_enabled or key.client_age_limit is None:
        raise ClientAccessRefused(
            "client_sessions_disabled",
            "Creating sessions from a browser or app is off for this publishable key. Create the session on your "
            "backend and pass its clientSecret, or turn client sessions on (with an age limit) in the dashboard.",
            403,
        )
    # session_create reads only the key's mode, which a publishable key has as a secret key does.
    return session_create(
        tenant=key.tenant,
        api_key=key,
        subject=subject,
        age_limit=key.client_age_limit,
        notification_url=key.client_notification_url,
    )


@dataclass(frozen=True)
class IssuedLaunchCode:
    code: str  # shown once, in the launch URL
    expires_at: object


def launch_code_issue(*, session: VerificationSession, return_url: str = "") -> IssuedLaunchCode:
    code = secrets.token_urlsafe(32)
    expires_at = timezone.now() + LAUNCH_CODE_TTL
    LaunchCode.objects.create(
        code_hash=session_token_hash(code), session=session, return_url=return_url, expires_at=expires_at
    )
    return IssuedLaunchCode(code=code, expires_at=expires_at)


def launch_code_redeem(code: str) -> LaunchCode | None:
    """The code's record if it is unused and under 60 s old, now marked used (once, even under a race)."""
    if not code or len(code) > _MAX_SECRET_LENGTH:
        return None
    now = timezone.now()
    code_hash = session_token_hash(code)
    claimed = LaunchCode.objects.filter(code_hash=code_hash, used_at__isnull=True, expires_at__gt=now).update(
        used_at=now
    )
    if not claimed:
        return None
    return LaunchCode.objects.select_related("session").get(code_hash=code_hash)


def launch_url(code: str) -> str:
    return f"{settings.PUBLIC_BASE_URL}/flow/launch?{urlencode({'code': code})}"


def client_session_creation_refused(request, publishable_key_id: int) -> BucketState | None:
    """Sessions created from browsers and apps with a publishable key (SDK mode): a token from the key's bucket
    and from the client address's (across all keys), so one page cannot mint sessions at the partner's expense.
    The refusing bucket's state, or None."""
    for bucket, rate, burst in (
        (f"pk:{publishable_key_id}", settings.CLIENT_SESSIONS_RATE_PER_KEY, settings.CLIENT_SESSIONS_BURST_PER_KEY),
        (
            f"pk-address:{client_address(request) or 'unknown'}",
            settings.CLIENT_SESSIONS_RATE_PER_ADDRESS,
            settings.CLIENT_SESSIONS_BURST_PER_ADDRESS,
        ),
    ):
        state = bucket_take(bucket, rate=rate, burst=burst)
        if state is not None and not state.allowed:
            return state
    return None
