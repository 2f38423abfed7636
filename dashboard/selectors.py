"""Reads for the dashboard, always scoped to one tenant: API keys, webhook deliveries and usage."""

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Count, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from age_passes.services import AGE_PASS_CAUSE
from sessions_api.decision import (
    MESSAGE_DOCUMENT_EXPIRED,
    MESSAGE_DOCUMENT_UNREADABLE,
    MESSAGE_HEAD_TURNS_MISSING,
    MESSAGE_HOLDER_MISMATCH,
    MESSAGE_NOT_LIVE,
    MESSAGE_ZONES_DISAGREE,
)
from sessions_api.models import DocumentResult, SessionDailyCount, SessionEvent, Status, VerificationSession
from sessions_api.sandbox import SANDBOX_CAUSE_PREFIX
from sessions_api.state_machine import APPROVED_REASONS
from sessions_api.submission import CAUSE_FACE_PATH_OFF, CAUSE_NO_CAMERA
from tenants.models import ApiKey, Tenant
from wallets.digital_id import DIGITAL_ID_CAUSE_PREFIX
from webhooks.models import WebhookDelivery
from webhooks.selectors import default_notification_url, deliveries_for_subject, deliveries_for_tenant

USAGE_DAYS = 30
RECENT_DELIVERIES = 25


def api_keys_exposed(*, tenant: Tenant) -> QuerySet[ApiKey]:
    """Active secret keys a browser or app sent to a client endpoint: to be replaced."""
    return ApiKey.objects.filter(tenant=tenant, exposed_at__isnull=False, revoked_at__isnull=True)


def api_keys_active(*, tenant: Tenant) -> QuerySet[ApiKey]:
    return (
        ApiKey.objects.filter(tenant=tenant, revoked_at__isnull=True)
        .select_related("created_by")
        .order_by("mode", "-created_at")
    )


def api_keys_recently_revoked(*, tenant: Tenant, limit: int = 5) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(tenant=tenant, revoked_at__isnull=False).order_by("-revoked_at")[:limit]


def api_key_for_tenant(*, tenant: Tenant, key_id: int) -> ApiKey | None:
    return ApiKey.objects.filter(tenant=tenant, pk=key_id).first()


def deliveries_recent(*, tenant: Tenant, limit: int = RECENT_DELIVERIES) -> list[WebhookDelivery]:
    return list(deliveries_for_tenant(tenant=tenant)[:limit])


def webhook_address(*, tenant: Tenant, mode: str) -> str:
    """The tenant's default notification address for `mode` ("" when none is set)."""
    return default_notification_url(tenant=tenant, mode=mode)


def deliveries_for_session(*, session: VerificationSession) -> list[WebhookDelivery]:
    """Oldest first: the session's detail page reads as a history."""
    deliveries = deliveries_for_subject(tenant=session.tenant, subject_ref=session.id)
    return list(deliveries.order_by("created_at"))


DOCUMENT_KINDS = {
    "mrz_td3": "Passport (TD3 machine-readable zone)",
    "mrz_td1": "ID card (TD1 machine-readable zone)",
    "aamva": "Driving licence (AAMVA barcode)",
}
# The check a document attempt failed, read from the message it was asked again with (sessions_api.decision).
DOCUMENT_RETAKE_CHECKS = {
    MESSAGE_DOCUMENT_UNREADABLE: "check digits of the machine-readable lines",
    MESSAGE_ZONES_DISAGREE: "printed dates against the machine-readable lines",
    MESSAGE_DOCUMENT_EXPIRED: "expiry date (the document has expired)",
    MESSAGE_NOT_LIVE: "liveness of the head turns",
    MESSAGE_HEAD_TURNS_MISSING: "head turns (none were done)",
    MESSAGE_HOLDER_MISMATCH: "holder match with the document's photo",
}


@dataclass(frozen=True)
class Attempt:
    """One thing the user sent (a selfie, a document, a wallet answer, an age pass) and what came of it."""

    number: int  # 1, 2, 3 within its step
    step: str  # "Selfie", "Document", "Digital ID", "Age pass", "Sandbox outcome"
    sent_at: datetime
    outcome: str  # "Approved: Approved by document", "Retake asked", "Denied: Document invalid", "Being analysed"
    outcome_kind: str  # the badge's colour: approved, denied, requires_doc (asked again), processing
    decided_at: datetime | None
    detail: str  # what the user was told (a retake), or the analysis' cause
    # What a document attempt found, as (label, value) pairs: the check it failed (a retake), or for the attempt
    # that decided, what the stored result says. Empty for other steps and once the session is redacted.
    findings: tuple[tuple[str, str], ...] = ()


def _attempt_step(event: SessionEvent) -> str:
    if event.cause.startswith(DIGITAL_ID_CAUSE_PREFIX):
        return "Digital ID"
    if event.cause == AGE_PASS_CAUSE:
        return "Age pass"
    if event.cause.startswith(SANDBOX_CAUSE_PREFIX):
        return "Sandbox outcome"
    return "Document" if event.from_status == Status.REQUIRES_DOC else "Selfie"


def _attempt_outcome(end: SessionEvent | None) -> tuple[str, str]:
    if end is None:
        return "Being analysed", Status.PROCESSING
    if end.to_status in (Status.APPROVED, Status.DENIED):
        return f"{end.get_to_status_display()}: {end.get_reason_display()}", end.to_status
    if end.to_status == Status.REQUIRES_DOC and end.from_status == Status.PROCESSING and not end.message:
        return "Document asked", Status.REQUIRES_DOC
    return "Asked again", Status.REQUIRES_DOC


def _document_result_findings(document: DocumentResult, decided_on: date) -> tuple[tuple[str, str], ...]:
    """What the stored result of the deciding document attempt says; it is stored only for a document whose
    check digits and printed dates passed (sessions_api.decision)."""
    if document.expiry_date is None:
        expiry = "none on the document"
    elif document.expiry_date < decided_on:
        expiry = f"expired on {document.expiry_date:%Y-%m-%d}"
    else:
        expiry = f"valid until {document.expiry_date:%Y-%m-%d}"
    if not document.liveness_checked:
        holder = "not checked"
    elif document.holder_match_passed is None:
        holder = "live (liveness checked), not compared with the document's photo"
    else:
        matched = "matched" if document.holder_match_passed else "not matched"
        holder = (
            f"live (liveness checked), {matched} with the document's photo (score {document.holder_match_score:.2f})"
        )
    return (
        ("Document", DOCUMENT_KINDS.get(document.document_kind, document.document_kind)),
        ("Machine-readable lines", "check digits and printed dates agree"),
        ("Expiry", expiry),
        ("Holder", holder),
    )


def _document_findings(end: SessionEvent | None, document: DocumentResult | None) -> tuple[tuple[str, str], ...]:
    if end is None:
        return ()
    if end.to_status in (Status.APPROVED, Status.DENIED):
        return _document_result_findings(document, end.created_at.date()) if document else ()
    failed = DOCUMENT_RETAKE_CHECKS.get(end.message)
    return (("Failed check", failed),) if failed else ()


def session_attempts(events: list[SessionEvent], *, session: VerificationSession | None = None) -> list[Attempt]:
    """Each attempt of a session, from its history: a move to `processing` (not the no-camera or face-path-off skip)
    is something sent, and the move out of it is its outcome. With the `session`, document attempts say what they
    found (its stored document result belongs to the attempt that decided), unless the session was redacted."""
    findings_shown = session is not None and session.redacted_at is None
    document = getattr(session, "document", None) if findings_shown else None
    attempts: list[Attempt] = []
    numbers: dict[str, int] = {}
    for index, event in enumerate(events):
        if event.to_status != Status.PROCESSING or event.cause in (CAUSE_NO_CAMERA, CAUSE_FACE_PATH_OFF):
            continue
        end = next((later for later in events[index + 1 :] if later.from_status == Status.PROCESSING), None)
        step = _attempt_step(event)
        numbers[step] = numbers.get(step, 0) + 1
        outcome, kind = _attempt_outcome(end)
        attempts.append(
            Attempt(
                number=numbers[step],
                step=step,
                sent_at=event.created_at,
                outcome=outcome,
                outcome_kind=kind,
                decided_at=end.created_at if end else None,
                detail=(end.message or end.cause) if end else "",
                findings=_document_findings(end, document) if findings_shown and step == "Document" else (),
            )
        )
    return attempts


@dataclass(frozen=True)
class UsageDay:
    day: date
    approved: int
    denied: int
    open: int

    @property
    def total(self) -> int:
        return self.approved + self.denied + self.open


@dataclass(frozen=True)
class Usage:
    mode: str
    days: list[UsageDay]
    # Approvals of the sessions still stored, by method (reason): age_estimation, document, digital_id.
    approved_by_method: dict[str, int] = field(default_factory=dict)

    @property
    def approved(self) -> int:
        return sum(day.approved for day in self.days)

    @property
    def denied(self) -> int:
        return sum(day.denied for day in self.days)

    @property
    def open(self) -> int:
        return sum(day.open for day in self.days)

    @property
    def total(self) -> int:
        return sum(day.total for day in self.days)

    @property
    def approval_rate(self) -> float | None:
        """Approved among finished sessions; None when none finished (a rate of 0 % would be a lie)."""
        finished = self.approved + self.denied
        return self.approved / finished if finished else None


def usage_by_day(*, tenant: Tenant, mode: str, days: int = USAGE_DAYS, today: date | None = None) -> Usage:
    """Sessions created on each of the last `days` UTC days (today included), split by their final status."""
    today = today or timezone.now().astimezone(UTC).date()
    first = today - timedelta(days=days - 1)
    start = datetime.combine(first, time.min, tzinfo=UTC)
    end = datetime.combine(today + timedelta(days=1), time.min, tzinfo=UTC)
    rows = (
        VerificationSession.objects.filter(tenant=tenant, mode=mode, created_at__gte=start, created_at__lt=end)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values("day", "status")
        .annotate(count=Count("id"))
    )
    counts: dict[date, dict[str, int]] = {}
    for row in rows:
        counts.setdefault(row["day"], {})[row["status"]] = row["count"]
    # Sessions the retention purge deleted are still counted, from the daily counts it kept.
    purged = SessionDailyCount.objects.filter(tenant=tenant, mode=mode, day__gte=first, day__lte=today)
    for row in purged.values("day", "status", "count"):
        by_status = counts.setdefault(row["day"], {})
        by_status[row["status"]] = by_status.get(row["status"], 0) + row["count"]
    series = []
    for offset in range(days):
        day = first + timedelta(days=offset)
        by_status = counts.get(day, {})
        approved = by_status.get(Status.APPROVED, 0)
        denied = by_status.get(Status.DENIED, 0)
        series.append(UsageDay(day, approved, denied, sum(by_status.values()) - approved - denied))
    methods = (
        VerificationSession.objects.filter(
            tenant=tenant, mode=mode, created_at__gte=start, created_at__lt=end, status=Status.APPROVED
        )
        .values("reason")
        .annotate(count=Count("id"))
    )
    by_method = {reason: 0 for reason in APPROVED_REASONS}
    by_method.update({row["reason"]: row["count"] for row in methods})
    return Usage(mode=mode, days=series, approved_by_method=by_method)
