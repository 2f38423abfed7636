"""The signed link to the hosted flow: `signature` and `verificationUrl` (CONTRACT 1 and 4), made and verified here.

A partner's user opens GET /flow/start?tenant_id=&session_id=&token=&signature=; `flow_link_verify`
turns that query into the session it opens, or a `FlowLinkRejected` naming the page to show.
"""

import base64
import hashlib
import hmac
import re
from functools import lru_cache
from urllib.parse import urlencode

from django.conf import settings
from django.utils import timezone

from .models import VerificationSession
from .selectors import SessionNotFound, session_get
from .services import session_token_hash
from .timestamps import iso_ms

PARAMETERS = ("tenant_id", "session_id", "token", "signature")
_URL_SAFE = re.compile(r"[A-Za-z0-9_.~-]*")  # what urlencode leaves as it is
_MAX_PARAMETER_LENGTH = 200


class FlowLinkRejected(Exception):
    """Why a link was refused: `kind` names the page to show (see flow.errors)."""

    def __init__(self, kind: str, session: VerificationSession | None = None):
        super().__init__(kind)
        self.kind = kind
        self.session = session  # set for a finished or expired session, whose outcome the page can show


@lru_cache(maxsize=4)
def _keyed_hmac(key: str):
    """HMAC-SHA256 with `key` already absorbed: a signature starts from a copy, a quarter cheaper than keying anew."""
    return hmac.new(key.encode(), digestmod=hashlib.sha256)


def flow_signature(*, session_id: str, token: str, expires_at: str, tenant_id: str) -> str:
    mac = _keyed_hmac(settings.FLOW_SIGNING_KEY).copy()
    mac.update(f"{session_id}.{token}.{expires_at}.{tenant_id}".encode())
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


def flow_signature_for(session: VerificationSession, token: str, expires_at: str | None = None) -> str:
    """The link's signature; `expires_at` is iso_ms(session.expires_at) when the caller has it already."""
    return flow_signature(
        session_id=session.id,
        token=token,
        expires_at=expires_at or iso_ms(session.expires_at),
        tenant_id=session.tenant_id,
    )


def verification_url(session: VerificationSession, token: str, signature: str | None = None) -> str:
    """The hosted flow's start link; `signature` is flow_signature_for(session, token) when already made."""
    values = (session.tenant_id, session.id, token, signature or flow_signature_for(session, token))
    if all(_URL_SAFE.fullmatch(value) for value in values):  # ids, the token and the signature are URL-safe
        query = "tenant_id={}&session_id={}&token={}&signature={}".format(*values)
    else:
        query = urlencode(dict(zip(PARAMETERS, values)))
    return f"{settings.PUBLIC_BASE_URL}/flow/start?{query}"


def flow_link_verify(query) -> VerificationSession:
    """The session a start link opens, or FlowLinkRejected. Order: signature, expiry, token, tenant, status.

    An unknown session and a bad signature are the same answer, so a link cannot be used to probe
    which session ids exist.
    """
    values = {name: query.get(name, "") for name in PARAMETERS}
    if not all(values.values()) or any(len(value) > _MAX_PARAMETER_LENGTH for value in values.values()):
        raise FlowLinkRejected("link_incomplete")
    try:
        session = session_get(session_id=values["session_id"])
    except SessionNotFound:
        raise FlowLinkRejected("link_invalid") from None
    expected = flow_signature(
        session_id=session.id,
        token=values["token"],
        expires_at=iso_ms(session.expires_at),
        tenant_id=values["tenant_id"],
    )
    if not hmac.compare_digest(expected.encode(), values["signature"].encode("utf-8", "replace")):
        raise FlowLinkRejected("link_invalid")
    if session.expires_at <= timezone.now():
        # The finalized session goes with it, so the page can offer the way back to the partner.
        raise FlowLinkRejected("link_expired", session)
    if not hmac.compare_digest(session_token_hash(values["token"]), session.token_hash):
        raise FlowLinkRejected("link_invalid")
    if values["tenant_id"] != session.tenant_id:
        raise FlowLinkRejected("link_invalid")
    if session.is_final:
        raise FlowLinkRejected("session_finished", session)
    return session
