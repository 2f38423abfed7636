"""Reads on sessions: the one door to a session by id (expired on read), its retake message, its face path."""
from tenants.identifiers import is_prefixed_ulid
from tenants.models import Tenant

from .age_assurance.policy import tenant_face_rule
from .models import SessionEvent, Status, VerificationSession
from .state_machine import session_expire_if_due


class SessionNotFound(Exception):
    pass


def session_get(*, session_id: str, tenant: Tenant | None = None, mode: str | None = None) -> VerificationSession:
    """The session, with its tenant and results; an open session past its expiry is finalized first.

    With `tenant`, another tenant's session is indistinguishable from an unknown id. With `mode`,
    only a session of that mode is found: a live key never sees sandbox sessions, nor a test key
    live ones, as two separate environments of one tenant.
    """
    if not is_prefixed_ulid(session_id, "ses"):
        raise SessionNotFound(session_id)
    sessions = VerificationSession.objects.select_related("tenant", "age_estimation", "liveness", "document")
    if tenant is not None:
        sessions = sessions.filter(tenant=tenant)
    if mode is not None:
        sessions = sessions.filter(mode=mode)
    session = sessions.filter(pk=session_id).first()
    if session is None:
        raise SessionNotFound(session_id)
    if not session.is_final and session_expire_if_due(session) is not session:
        # Expired by this read (or finalized meanwhile): read it again, results and all.
        session = sessions.get(pk=session_id)
    return session


def session_retake_message(session: VerificationSession) -> str | None:
    """The message of the retake that sent the session back to its current step, if that is how it got there."""
    if session.status not in (Status.INITIATED, Status.REQUIRES_DOC):
        return None
    last = SessionEvent.objects.filter(session=session).order_by("-id").first()
    if last is None or last.to_status != session.status or not last.message:
        return None
    return last.message


def session_face_path_on(session: VerificationSession) -> bool:
    """Whether a face can approve this session; when not, the flow goes straight to the document step."""
    return tenant_face_rule(session.tenant, session.age_limit).face_path_on
