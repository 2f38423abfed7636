"""Reads on sessions: the one door to a session by id (expired on read), its projection, retake message, face path."""

from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from typing import NamedTuple

from django.db.models import Q
from django.utils import timezone

from core.hot_sql import fetch_one, hot_sql_applies
from core.identifiers import is_prefixed_ulid
from tenants.models import Tenant

from .age_policy import tenant_face_rule
from .choices import Mode
from .models import (
    AgeCredentialResult,
    AgeEstimationResult,
    AgePassResult,
    DocumentResult,
    LivenessResult,
    SessionEvent,
    Status,
    VerificationSession,
)
from .state_machine import OPEN_STATUSES, session_expire_if_due


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
    sessions = VerificationSession.objects.select_related(
        "tenant", "age_estimation", "liveness", "document", "age_credential", "age_pass"
    )
    try:
        # By id alone, tenant and mode compared here: see _session_read_sql for why not in the query.
        session = sessions.get(pk=session_id)
    except VerificationSession.DoesNotExist:
        raise SessionNotFound(session_id) from None
    if (tenant is not None and session.tenant_id != tenant.pk) or (mode is not None and session.mode != mode):
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


@dataclass(frozen=True)
class AgeEstimationRead:
    estimated_age: float
    age_confidence: float


@dataclass(frozen=True)
class LivenessRead:
    is_live: bool
    liveness_score: float
    signals: list[str]


@dataclass(frozen=True)
class DocumentRead:
    true_age: int
    birthdate: date
    liveness_checked: bool
    holder_match_score: float | None
    holder_match_passed: bool | None


@dataclass(frozen=True)
class AgeCredentialRead:
    kind: str
    doc_type: str
    claim: str
    value: bool
    issuer_country: str
    trust_source: str
    created_at: datetime


@dataclass(frozen=True)
class AgePassRead:
    method: str
    thresholds: list
    proof_age: str


class SessionRead(NamedTuple):
    """What GET /v1/sessions/{id} shows of a session and its results, nothing more (a tuple: made per read)."""

    id: str
    status: str
    subject: str
    age_limit: int
    mode: str
    reason: str
    expires_at: datetime
    callback_url: str
    cancel_url: str
    notification_url: str
    created_at: datetime
    updated_at: datetime
    metadata: dict
    redacted_at: datetime | None
    age_estimation: AgeEstimationRead | None
    liveness: LivenessRead | None
    document: DocumentRead | None
    age_credential: AgeCredentialRead | None
    age_pass: AgePassRead | None


_SESSION_COLUMNS = SessionRead._fields[:14]
_STATUS, _MODE, _EXPIRES_AT = (_SESSION_COLUMNS.index(name) for name in ("status", "mode", "expires_at"))


@lru_cache(maxsize=1)
def _session_read_sql() -> str:
    # Written once from the models' tables: the API's most frequent read runs without ORM compilation,
    # in one round trip, with the columns the answer shows and no ORDER BY (a primary-key read). Only
    # the id is in the WHERE clause (the caller compares tenant and mode): filtered on the tenant too,
    # PostgreSQL could plan the read on the tenant's index, for a tenant that had few sessions at the
    # last ANALYZE, and then scan all its sessions on every read.
    session = VerificationSession._meta.db_table
    age, liveness, document, credential, age_pass = (
        model._meta.db_table
        for model in (AgeEstimationResult, LivenessResult, DocumentResult, AgeCredentialResult, AgePassResult)
    )
    columns = ", ".join(f"s.{column}" for column in _SESSION_COLUMNS)
    return (
        f"SELECT {columns}, a.id, a.estimated_age, a.age_confidence, l.id, l.is_live, l.liveness_score, l.signals, "
        f"d.id, d.true_age, d.birthdate, d.liveness_checked, d.holder_match_score, d.holder_match_passed, "
        f"c.id, c.kind, c.doc_type, c.claim, c.value, c.issuer_country, c.trust_source, c.created_at, "
        f"p.id, p.method, p.thresholds, p.proof_age, s.tenant_id "
        f"FROM {session} s "
        f"LEFT JOIN {age} a ON a.session_id = s.id LEFT JOIN {liveness} l ON l.session_id = s.id "
        f"LEFT JOIN {document} d ON d.session_id = s.id LEFT JOIN {credential} c ON c.session_id = s.id "
        f"LEFT JOIN {age_pass} p ON p.session_id = s.id "
        "WHERE s.id = %s"
    )


def session_read_for_tenant(*, tenant: Tenant, session_id: str, mode: str) -> SessionRead | VerificationSession:
    """The session as the API shows it, in one query; the same rules as `session_get`, which does the expiry.

    The raw row is PostgreSQL's: on the demo's SQLite, whose driver gives naive datetimes and 0/1 for
    booleans, the ORM reads it (the representation takes either).
    """
    if not is_prefixed_ulid(session_id, "ses"):
        raise SessionNotFound(session_id)
    if not hot_sql_applies():
        return session_get(session_id=session_id, tenant=tenant, mode=mode)
    row = fetch_one(_session_read_sql(), [session_id])
    if row is None or row[-1] != tenant.pk or row[_MODE] != mode:  # s.tenant_id is the last column
        raise SessionNotFound(session_id)
    row = row[:-1]
    age_id, age, confidence, liveness_id, is_live, score, signals, document_id, *document = row[14:27]
    credential_id, *credential = row[27:35]
    age_pass_id, *age_pass = row[35:]
    if row[_STATUS] in OPEN_STATUSES and row[_EXPIRES_AT] <= timezone.now():
        # Rare: the read finalizes the session, through the state machine, and reads it again.
        session_get(session_id=session_id, tenant=tenant, mode=mode)
        return session_read_for_tenant(tenant=tenant, session_id=session_id, mode=mode)
    return SessionRead(
        *row[:14],  # in _SESSION_COLUMNS' order, SessionRead's first fields
        age_estimation=AgeEstimationRead(age, confidence) if age_id is not None else None,
        liveness=LivenessRead(is_live, score, signals or []) if liveness_id is not None else None,
        document=DocumentRead(*document) if document_id is not None else None,
        age_credential=AgeCredentialRead(*credential) if credential_id is not None else None,
        age_pass=AgePassRead(*age_pass) if age_pass_id is not None else None,
    )


def session_face_estimated(session: VerificationSession) -> bool:
    """Whether a selfie of this session passed liveness and had its age estimated (its face was then not enough,
    or the session was approved by it)."""
    return AgeEstimationResult.objects.filter(session_id=session.pk).exists()


def session_face_path_on(session: VerificationSession) -> bool:
    """Whether a face can approve this session; when not, the flow goes straight to the document step."""
    return tenant_face_rule(session.tenant, session.age_limit).face_path_on


@dataclass(frozen=True)
class SessionPage:
    sessions: list  # of VerificationSession, newest first, results joined
    has_more: bool


def sessions_list_for_tenant(
    *,
    tenant: Tenant,
    mode: str,
    statuses: tuple[str, ...] = (),
    subject: str | None = None,
    created_from: datetime | None = None,
    created_before: datetime | None = None,
    after: tuple[datetime, str] | None = None,
    limit: int = 20,
) -> SessionPage:
    """One page of a tenant's sessions of one mode, newest first (ties by id), after the keyset `after`.

    Open sessions past their expiry are finalized first, as a read by id would, so the page shows them expired.
    """
    sessions = VerificationSession.objects.filter(tenant=tenant, mode=mode)
    if subject is not None:
        sessions = sessions.filter(subject=subject)
    if created_from is not None:
        sessions = sessions.filter(created_at__gte=created_from)
    if created_before is not None:
        sessions = sessions.filter(created_at__lt=created_before)
    if after is not None:
        created_at, session_id = after
        sessions = sessions.filter(Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=session_id))
    if statuses:
        sessions = sessions.filter(status__in=statuses)
    sessions = sessions.select_related("tenant", "age_estimation", "liveness", "document").order_by(
        "-created_at", "-id"
    )
    while True:
        page = list(sessions[: limit + 1])
        now = timezone.now()
        due = [session for session in page[:limit] if session.status in OPEN_STATUSES and session.expires_at <= now]
        if not due:
            return SessionPage(sessions=page[:limit], has_more=len(page) > limit)
        for session in due:  # rare (beat expires them every 30 s): finalize, then read the page again
            session_expire_if_due(session)


def session_presence_required(session: VerificationSession) -> bool:
    """Whether a document needs a passed head-turn capture of this session matching its portrait (tenant
    policy, on by default; sandbox sessions run no checks)."""
    return session.mode == Mode.LIVE and session.tenant.document_presence_required
