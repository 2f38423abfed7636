"""The session state machine (CONTRACT 3): the only code that changes a session's status.

Every transition is one conditional UPDATE (`WHERE status IN allowed-from`) inside a transaction, so
two concurrent transitions cannot both win, a final state never changes again, and the outbox row
of the `verification.completed` webhook commits together with the final state.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from webhooks.selectors import default_notification_url
from webhooks.services import delivery_enqueue

from .events import (
    EVENT_COMPLETED,
    EVENT_REQUIRES_INPUT,
    EVENT_STARTED,
    completed_event_payload,
    requires_input_event_payload,
    started_event_payload,
)
from .models import (
    AgeCredentialResult,
    AgeEstimationResult,
    AgePassResult,
    DocumentResult,
    LivenessResult,
    Reason,
    SessionEvent,
    Status,
    Step,
    VerificationSession,
)

OPEN_STATUSES = (Status.INITIATED, Status.PROCESSING, Status.REQUIRES_DOC)
FINAL_STATUSES = (Status.APPROVED, Status.DENIED)

# to-status -> the statuses it may be reached from.
ALLOWED_FROM: dict[str, tuple[str, ...]] = {
    # A selfie or a document was submitted and is being analysed.
    Status.PROCESSING: (Status.INITIATED, Status.REQUIRES_DOC),
    # Back to the start after a selfie the checks could not use (a "retake", counted in selfie_attempts).
    Status.INITIATED: (Status.PROCESSING,),
    Status.REQUIRES_DOC: (Status.PROCESSING,),
    Status.APPROVED: (Status.PROCESSING,),
    # Decisions come from processing; expiry and cancellation may end any open session.
    Status.DENIED: OPEN_STATUSES,
}
# The denials that may end a session outside `processing` (CONTRACT 3); any other is a decision on analysed data.
ENDS_ANY_OPEN_SESSION = (Reason.CANCELLED, Reason.EXPIRED)
APPROVED_REASONS = (Reason.AGE_ESTIMATION, Reason.DOCUMENT, Reason.DIGITAL_ID, Reason.AGE_PASS)
# The step a session waiting in this status is on (in `processing` it keeps the step being analysed).
STEP_OF_STATUS = {Status.INITIATED: Step.SELFIE, Status.REQUIRES_DOC: Step.DOCUMENT}
ATTEMPT_COUNTER = {Step.SELFIE: "selfie_attempts", Step.DOCUMENT: "document_attempts"}
# The cause recorded when the partner cancels through POST /v1/sessions/{id}/cancel (not the user).
CANCELLED_THROUGH_API = "cancelled by the partner through the API"


class TransitionNotAllowed(Exception):
    """The session is not in a state from which this transition may happen (or it is already final)."""


@dataclass(frozen=True)
class Results:
    """Check results to store together with a transition (numbers only)."""

    age_estimation: dict | None = None  # {"estimated_age", "age_confidence"}
    liveness: dict | None = None  # {"is_live", "liveness_score"[, "signals"]}
    document: dict | None = None  # {"document_kind", "birthdate", "true_age", "expiry_date"}
    age_credential: dict | None = None  # {"kind", "doc_type", "claim", "value", "issuer_country", "trust_source"}
    age_pass: dict | None = None  # {"method", "thresholds", "proof_age"}


def _check_reason(to: str, reason: str) -> None:
    if to == Status.APPROVED and reason not in APPROVED_REASONS:
        raise ValueError(f"approved needs one of {APPROVED_REASONS}, got {reason!r}")
    if to == Status.DENIED and (not reason or reason in APPROVED_REASONS):
        raise ValueError(f"denied needs a denial reason, got {reason!r}")
    if to in OPEN_STATUSES and reason:
        raise ValueError("an open status carries no reason")


def _check_step(to: str, step: str, message: str) -> None:
    if to in STEP_OF_STATUS and step != STEP_OF_STATUS[to]:
        raise ValueError(f"{to} is the {STEP_OF_STATUS[to]} step, not the {step} step")
    if message and to not in STEP_OF_STATUS:
        raise ValueError("a message is for a user sent back to a step")


@transaction.atomic
def session_transition(
    *,
    session_id: str,
    to: str,
    cause: str,
    reason: str = "",
    expected_from: tuple[str, ...] | None = None,
    results: Results | None = None,
    step: str | None = None,
    count_attempt: bool = False,
    message: str = "",
) -> VerificationSession:
    """Move a session to `to`, or raise TransitionNotAllowed if its current status does not allow it.

    `expected_from` narrows the allowed origins (a worker deciding a selfie expects `processing`).
    `step` is the step the session is on afterwards: by default the one `to` belongs to (initiated:
    selfie, requires_doc: document), else unchanged (processing keeps the step being analysed).
    `count_attempt` counts, in the same UPDATE, an attempt of the step `step` names or, without it, of
    the step the session was on (the one just analysed). `message`
    tells the user sent back to a step why (a retake); `cause` tells the operator.
    """
    _check_reason(to, reason)
    allowed = ALLOWED_FROM[to]
    if to == Status.DENIED and reason not in ENDS_ANY_OPEN_SESSION:
        allowed = (Status.PROCESSING,)
    if expected_from is not None:
        allowed = tuple(status for status in allowed if status in expected_from)
    now = timezone.now()
    locked = VerificationSession.objects.select_for_update().filter(pk=session_id, status__in=allowed).first()
    if locked is None:
        raise TransitionNotAllowed(f"{session_id}: no transition to {to} from its current status")
    from_status = locked.status
    counted_step = step or locked.step
    step = step or STEP_OF_STATUS.get(to) or locked.step
    _check_step(to, step, message)
    updates = {"status": to, "reason": reason, "updated_at": now, "step": step}
    if count_attempt:
        counter = ATTEMPT_COUNTER[counted_step]
        updates[counter] = F(counter) + 1
    if to in FINAL_STATUSES:
        updates["finalized_at"] = now
        updates["evidence_seal"] = ""  # what the session kept for its holder check goes as it ends (evidence.py)
    VerificationSession.objects.filter(pk=session_id, status=from_status).update(**updates)
    session = VerificationSession.objects.select_related("tenant").get(pk=session_id)
    SessionEvent.objects.create(
        session=session, from_status=from_status, to_status=to, reason=reason, cause=cause, message=message
    )
    if results is not None:
        _store_results(session, results)
    if to in FINAL_STATUSES:
        _enqueue_completed_webhook(session)
    elif to in STEP_OF_STATUS:
        # Sent back to a step: a document is needed (requires_doc) or a selfie must be retaken (initiated).
        session_event_enqueue(session, EVENT_REQUIRES_INPUT, requires_input_event_payload(session))
    return session


@transaction.atomic
def session_opened(session: VerificationSession) -> bool:
    """Record the first time the user opens the flow (`opened_at`); True, and `verification.started` queued,
    only for that first time: a reload, a second tab or a relaunch change nothing."""
    now = timezone.now()
    if not VerificationSession.objects.filter(pk=session.pk, opened_at__isnull=True).update(opened_at=now):
        return False
    session.opened_at = now
    session_event_enqueue(session, EVENT_STARTED, started_event_payload(session, now))
    return True


def session_consented(session: VerificationSession) -> None:
    """Record the first time the user goes past the consent page (`consented_at`), for the dashboard's funnel."""
    if session.consented_at is None:
        now = timezone.now()
        VerificationSession.objects.filter(pk=session.pk, consented_at__isnull=True).update(consented_at=now)
        session.consented_at = now


def _store_results(session: VerificationSession, results: Results) -> None:
    if results.age_estimation is not None:
        AgeEstimationResult.objects.update_or_create(session=session, defaults=results.age_estimation)
    if results.liveness is not None:
        LivenessResult.objects.update_or_create(session=session, defaults=results.liveness)
    if results.document is not None:
        DocumentResult.objects.update_or_create(session=session, defaults=results.document)
    if results.age_credential is not None:
        AgeCredentialResult.objects.update_or_create(session=session, defaults=results.age_credential)
    if results.age_pass is not None:
        AgePassResult.objects.update_or_create(session=session, defaults=results.age_pass)


def event_opted_in(session: VerificationSession, event_type: str) -> bool:
    """Whether the session's tenant sends `event_type` for the session's mode (completed: always)."""
    if event_type == EVENT_COMPLETED:
        return True
    return event_type in (session.tenant.webhook_extra_events or {}).get(session.mode, ())


def session_event_enqueue(session: VerificationSession, event_type: str, payload: bytes) -> None:
    """Queue one event of `session` in the caller's transaction, when the tenant sends it and has an address."""
    if not session.tenant.webhooks_enabled or not event_opted_in(session, event_type):
        return
    # The session's own address, else the tenant's default address for the session's mode (dashboard).
    url = session.notification_url or default_notification_url(tenant=session.tenant, mode=session.mode)
    if not url:
        return
    delivery_enqueue(
        tenant=session.tenant,
        url=url,
        event_type=event_type,
        payload=payload,
        mode=session.mode,
        subject_ref=session.id,
    )


def _enqueue_completed_webhook(session: VerificationSession) -> None:
    session_event_enqueue(session, EVENT_COMPLETED, completed_event_payload(session))


def session_cancel(*, session_id: str, cause: str = "cancelled by the user in the web flow") -> VerificationSession:
    return session_transition(session_id=session_id, to=Status.DENIED, reason=Reason.CANCELLED, cause=cause)


def session_expire_if_due(session: VerificationSession) -> VerificationSession:
    """Finalize an open session past its `expiresAt` as denied/expired; otherwise return it unchanged."""
    if session.status not in OPEN_STATUSES or session.expires_at > timezone.now():
        return session
    try:
        return session_transition(
            session_id=session.id, to=Status.DENIED, reason=Reason.EXPIRED, cause="session expired"
        )
    except TransitionNotAllowed:  # finalized concurrently: return what won
        return VerificationSession.objects.select_related("tenant").get(pk=session.id)


def sessions_expire_due(*, batch_size: int = 500) -> int:
    """Finalize every open session past its expiry; returns how many were expired by this call."""
    expired = 0
    due = VerificationSession.objects.filter(status__in=OPEN_STATUSES, expires_at__lte=timezone.now())
    for session_id in due.values_list("id", flat=True)[:batch_size]:
        try:
            session_transition(session_id=session_id, to=Status.DENIED, reason=Reason.EXPIRED, cause="session expired")
            expired += 1
        except TransitionNotAllowed:
            continue
    return expired
