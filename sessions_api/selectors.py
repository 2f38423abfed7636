"""Reads on sessions: a tenant's session by id, expired on read when its time is up; its face path."""
from tenants.identifiers import is_prefixed_ulid
from tenants.models import Tenant

from .age_assurance.policy import tenant_face_rule
from .models import VerificationSession
from .state_machine import session_expire_if_due


class SessionNotFound(Exception):
    pass


def session_get_for_tenant(*, tenant: Tenant, session_id: str, mode: str | None = None) -> VerificationSession:
    """The session, with its results; another tenant's session is indistinguishable from an unknown id.

    With `mode`, only a session of that mode is found: a live key never sees sandbox sessions, nor a
    test key live ones, as two separate environments of one tenant.
    """
    if not is_prefixed_ulid(session_id, "ses"):
        raise SessionNotFound(session_id)
    sessions = VerificationSession.objects.select_related("tenant", "age_estimation", "liveness", "document")
    if mode is not None:
        sessions = sessions.filter(mode=mode)
    session = sessions.filter(tenant=tenant, pk=session_id).first()
    if session is None:
        raise SessionNotFound(session_id)
    if session.expires_at is not None and not session.is_final:
        expired = session_expire_if_due(session)
        if expired is not session:
            return session_get_for_tenant(tenant=tenant, session_id=session_id, mode=mode)
    return session


def session_face_path_on(session: VerificationSession) -> bool:
    """Whether a face can approve this session; when not, the flow goes straight to the document step."""
    return tenant_face_rule(session.tenant, session.age_limit).face_path_on
