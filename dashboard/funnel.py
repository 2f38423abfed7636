"""The funnel of one tenant's sessions in a period and mode: where users stop, how long a decision takes, by what.

Each step is read from what a session already records: `opened_at` (the flow's first page), `consented_at` (past
the consent page) and its history of status changes (sessions_api.models.SessionEvent): a picture or proof sent
is a move to `processing` that is not the "no camera" or "face path off" skip, a document sent is the document
step's submission (or a sandbox outcome chosen there). A step counts every session that reached it or a later
one of the path (created, opened, consent given, capture sent, decided), so no step counts more than the one
before; the document is not on every path, so its drop-off counts only the sessions that were asked for one.
Sessions the retention purge deleted are not in it (their history went with them).
"""

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Count, DurationField, Exists, ExpressionWrapper, F, OuterRef, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from sessions_api.models import Reason, SessionEvent, Status, VerificationSession
from sessions_api.sandbox import SANDBOX_CAUSE_PREFIX
from sessions_api.state_machine import APPROVED_REASONS
from sessions_api.submission import CAUSE_DOCUMENT_SUBMITTED, CAUSE_FACE_PATH_OFF, CAUSE_NO_CAMERA
from tenants.models import Tenant

PERIODS = (7, 30, 90)  # days, today (UTC) included
DEFAULT_PERIOD = 30
# Ended without a decision on the user's evidence: not "decided".
NOT_DECIDED_REASONS = (Reason.CANCELLED, Reason.EXPIRED)
METHOD_LABELS = {
    Reason.AGE_ESTIMATION: "Face",
    Reason.DOCUMENT: "Document",
    Reason.DIGITAL_ID: "Digital ID",
    Reason.AGE_PASS: "Age pass",
}


@dataclass(frozen=True)
class FunnelStep:
    key: str
    label: str
    count: int
    # Sessions that reached the step before (for the document: that were asked for one) but not this one.
    dropped: int
    base: int  # what `dropped` is counted out of

    @property
    def dropped_share(self) -> float | None:
        return self.dropped / self.base if self.base else None


@dataclass(frozen=True)
class Funnel:
    mode: str
    days: int
    first_day: date
    last_day: date
    steps: list[FunnelStep]
    median_seconds_to_decision: float | None
    approved_by_method: dict[str, int] = field(default_factory=dict)

    @property
    def created(self) -> int:
        return self.steps[0].count

    def step(self, key: str) -> FunnelStep:
        return next(step for step in self.steps if step.key == key)


def _moved(*conditions, **filters) -> Exists:
    """Whether the session's history has a status change matching these."""
    return Exists(SessionEvent.objects.filter(*conditions, session=OuterRef("pk"), **filters))


def _period(days: int, today: date | None) -> tuple[date, date, datetime, datetime]:
    last = today or timezone.now().astimezone(UTC).date()
    first = last - timedelta(days=days - 1)
    start = datetime.combine(first, time.min, tzinfo=UTC)
    return first, last, start, datetime.combine(last + timedelta(days=1), time.min, tzinfo=UTC)


def funnel_for(*, tenant: Tenant, mode: str, days: int = DEFAULT_PERIOD, today: date | None = None) -> Funnel:
    """The funnel of the sessions of `tenant` and `mode` created in the last `days` UTC days (today included)."""
    first, last, start, end = _period(days, today)
    sessions = VerificationSession.objects.filter(tenant=tenant, mode=mode, created_at__gte=start, created_at__lt=end)
    decided = Q(status__in=(Status.APPROVED, Status.DENIED)) & ~Q(reason__in=NOT_DECIDED_REASONS)
    sent_evidence = Q(_moved(~Q(cause__in=(CAUSE_NO_CAMERA, CAUSE_FACE_PATH_OFF)), to_status=Status.PROCESSING))
    sent_document = Q(
        _moved(
            Q(cause=CAUSE_DOCUMENT_SUBMITTED) | Q(cause__startswith=SANDBOX_CAUSE_PREFIX),
            from_status=Status.REQUIRES_DOC,
            to_status=Status.PROCESSING,
        )
    )
    # Each step includes the sessions past it: a later step implies the earlier ones.
    captured = sent_evidence | sent_document | decided
    consented = Q(consented_at__isnull=False) | captured
    opened = Q(opened_at__isnull=False) | consented
    counts = sessions.aggregate(
        created=Count("pk"),
        opened=Count("pk", filter=opened),
        consented=Count("pk", filter=consented),
        captured=Count("pk", filter=captured),
        asked_document=Count("pk", filter=Q(_moved(to_status=Status.REQUIRES_DOC)) | sent_document),
        sent_document=Count("pk", filter=sent_document),
        decided=Count("pk", filter=decided),
    )
    steps = [
        FunnelStep("created", "Created", counts["created"], 0, 0),
        FunnelStep("opened", "Opened", counts["opened"], counts["created"] - counts["opened"], counts["created"]),
        FunnelStep(
            "consented", "Consent given", counts["consented"], counts["opened"] - counts["consented"], counts["opened"]
        ),
        FunnelStep(
            "captured",
            "Capture sent",
            counts["captured"],
            counts["consented"] - counts["captured"],
            counts["consented"],
        ),
        FunnelStep(
            "document",
            "Document sent",
            counts["sent_document"],
            counts["asked_document"] - counts["sent_document"],
            counts["asked_document"],
        ),
        FunnelStep("decided", "Decided", counts["decided"], counts["captured"] - counts["decided"], counts["captured"]),
    ]
    by_method = {reason: 0 for reason in APPROVED_REASONS}
    approved = sessions.filter(status=Status.APPROVED).values("reason").annotate(count=Count("pk"))
    by_method.update({row["reason"]: row["count"] for row in approved})
    return Funnel(
        mode=mode,
        days=days,
        first_day=first,
        last_day=last,
        steps=steps,
        median_seconds_to_decision=_median_seconds_to_decision(sessions.filter(decided)),
        approved_by_method=by_method,
    )


def _median_seconds_to_decision(decided) -> float | None:
    """From the flow's first opening (its creation, when never opened) to the decision; the database orders them."""
    durations = decided.filter(finalized_at__isnull=False).annotate(
        took=ExpressionWrapper(F("finalized_at") - Coalesce("opened_at", "created_at"), output_field=DurationField())
    )
    total = durations.count()
    if not total:
        return None
    ordered = durations.order_by("took").values_list("took", flat=True)
    middle = list(ordered[(total - 1) // 2 : total // 2 + 1])
    return sum(value.total_seconds() for value in middle) / len(middle)
