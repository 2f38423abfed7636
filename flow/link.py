"""Validation of the partner's verification link GET /flow/start?tenant_id=&session_id=&token=&signature= (CONTRACT 4)."""
import hmac

from django.utils import timezone

from sessions_api.flow_link import flow_signature
from sessions_api.models import VerificationSession
from sessions_api.services import session_token_hash
from sessions_api.state_machine import session_expire_if_due
from sessions_api.timestamps import iso_ms
from tenants.identifiers import is_prefixed_ulid

PARAMETERS = ("tenant_id", "session_id", "token", "signature")
_MAX_PARAMETER_LENGTH = 200


class LinkRejected(Exception):
    """Why a link was refused: `kind` names the page to show (see flow.errors)."""

    def __init__(self, kind: str, session: VerificationSession | None = None):
        super().__init__(kind)
        self.kind = kind
        self.session = session  # set for a finished or expired session, whose outcome the page can show


def flow_link_validate(query) -> VerificationSession:
    """The session a start link opens, or LinkRejected. Order: signature, expiry, token, tenant, status.

    An unknown session and a bad signature are the same answer, so a link cannot be used to probe
    which session ids exist.
    """
    values = {name: query.get(name, "") for name in PARAMETERS}
    if not all(values.values()) or any(len(value) > _MAX_PARAMETER_LENGTH for value in values.values()):
        raise LinkRejected("link_incomplete")
    session = None
    if is_prefixed_ulid(values["session_id"], "ses"):
        session = VerificationSession.objects.select_related("tenant").filter(pk=values["session_id"]).first()
    if session is None:
        raise LinkRejected("link_invalid")
    expected = flow_signature(
        session_id=session.id, token=values["token"], expires_at=iso_ms(session.expires_at),
        tenant_id=values["tenant_id"],
    )
    if not hmac.compare_digest(expected.encode(), values["signature"].encode("utf-8", "replace")):
        raise LinkRejected("link_invalid")
    if session.expires_at <= timezone.now():
        # The finalized session goes with it, so the page can offer the way back to the partner.
        raise LinkRejected("link_expired", session_expire_if_due(session))
    if not hmac.compare_digest(session_token_hash(values["token"]), session.token_hash):
        raise LinkRejected("link_invalid")
    if values["tenant_id"] != session.tenant_id:
        raise LinkRejected("link_invalid")
    if session.is_final:
        raise LinkRejected("session_finished", session)
    return session
