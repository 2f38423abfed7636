"""The analysis pipeline: a submitted selfie or document goes to `processing`, is checked, and is decided.

How biometric images are handled (CONTRACT 3: "held in memory only for the analysis, then deleted"):
  * The web flow reads an upload into memory only (flow.uploads keeps files off disk) and checks
    it with `checks.images.open_image` before anything changes.
  * `selfie_submit` / `document_submit` move the session to `processing` and publish one Celery
    task whose message carries the image bytes. The message lives in the broker (Redis, in memory)
    until the worker acknowledges it, and expires unconsumed after ANALYSIS_TASK_EXPIRES seconds.
    (The embedded demo's filesystem broker keeps it as a file under var/broker until consumed.)
  * The worker (`selfie_analyse` / `document_analyse`) runs the checks on the bytes in memory,
    applies the decision rule (sessions_api.decision) and stores only the result numbers, through
    the state machine. Our code never writes an image to disk; the bytes go when the task ends.
A retake sends the session back (processing -> initiated for a selfie, -> requires_doc for a
document) with the message to show, which is kept in the transition's event `cause`.
A lost or expired task message would leave the session in `processing` for ever: a periodic
watchdog (`stuck_analyses_release`) sends it back the same way, without counting the attempt.
"""
from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from .age_assurance.policy import tenant_face_rule
from .decision import Decision, decide_document, decide_selfie
from .models import Mode, SessionEvent, Status, VerificationSession
from .state_machine import TransitionNotAllowed, session_expire_if_due, session_transition

logger = logging.getLogger(__name__)

RETAKE_CAUSE_PREFIX = "retake: "
# An unconsumed analysis message is dropped after this many seconds (no backlog keeps images around).
ANALYSIS_TASK_EXPIRES = 10 * 60
# Past the message's lifetime and this margin, no worker can still be deciding the session.
STUCK_ANALYSIS_MARGIN = 5 * 60
MESSAGE_ANALYSIS_LOST = "We could not check your pictures in time. This attempt does not count."
MAX_FRAMES_PER_STEP = 8
MESSAGE_CHECK_FAILED = "Something went wrong while checking your picture. Please try again."
MESSAGE_QUEUE_DOWN = "We cannot check pictures right now. Please try again in a minute."
MESSAGE_CHALLENGE_CHANGED = "The instructions changed while you were taking the pictures. Please start again."
MESSAGE_FRAMES_MISSING = "We did not receive a picture for every instruction. Please start again."
MESSAGE_TOO_MANY_FRAMES = "Too many pictures were sent. Please start again."


class SubmissionRejected(Exception):
    """The upload cannot be analysed; `message` is for the user. Nothing about the session changed."""

    def __init__(self, message: str, *, status_code: int = 400):
        super().__init__(message)
        self.message = message
        self.status_code = status_code


# --- web side: accept a submission ---------------------------------------------------------------

def selfie_challenge_issue(*, session: VerificationSession) -> list[str]:
    """A fresh head-turn challenge for the selfie page, stored on the session (not biometric data)."""
    from checks.liveness import challenge_new

    challenge = challenge_new()
    updated = VerificationSession.objects.filter(pk=session.pk, status=Status.INITIATED).update(
        liveness_challenge=challenge, updated_at=timezone.now()
    )
    if updated:
        session.liveness_challenge = challenge
    return challenge


def _validate_image(data: bytes) -> None:
    from checks.images import ImageRejected, open_image

    try:
        open_image(data)
    except ImageRejected as rejected:
        raise SubmissionRejected(rejected.message) from None


def selfie_submit(*, session: VerificationSession, challenge: list[str], frames_by_step: list[list[bytes]]) -> None:
    """Check the frames of each challenge step, go to `processing` and queue the analysis.

    `challenge` is the one the page showed; a page left open while another tab issued a new one
    is refused rather than judged against instructions the user never saw.
    """
    if not session.liveness_challenge or list(challenge) != list(session.liveness_challenge):
        raise SubmissionRejected(MESSAGE_CHALLENGE_CHANGED, status_code=409)
    if len(frames_by_step) != len(challenge) or not all(frames_by_step):
        raise SubmissionRejected(MESSAGE_FRAMES_MISSING)
    if any(len(step_frames) > MAX_FRAMES_PER_STEP for step_frames in frames_by_step):
        raise SubmissionRejected(MESSAGE_TOO_MANY_FRAMES, status_code=413)
    frames = [(step, data) for step, step_frames in zip(challenge, frames_by_step) for data in step_frames]
    for _, data in frames:
        _validate_image(data)
    from .tasks import selfie_analysis_queue

    _submit(session, Status.INITIATED, lambda: selfie_analysis_queue(session.id, frames), cause="selfie submitted")


def document_submit(*, session: VerificationSession, image: bytes) -> None:
    _validate_image(image)
    from .tasks import document_analysis_queue

    _submit(session, Status.REQUIRES_DOC, lambda: document_analysis_queue(session.id, image), cause="document submitted")


def _submit(session: VerificationSession, from_status: str, publish, *, cause: str) -> None:
    try:
        session_transition(session_id=session.id, to=Status.PROCESSING, expected_from=(from_status,), cause=cause)
    except TransitionNotAllowed:
        raise SubmissionRejected("This step is already done. Continue from the current page.", status_code=409)
    try:
        publish()
    except Exception:  # broker unreachable: nothing will analyse it, so give the step back (no attempt used)
        logger.exception("could not queue the analysis of %s", session.id)
        try:
            session_transition(session_id=session.id, to=from_status, expected_from=(Status.PROCESSING,),
                               cause=RETAKE_CAUSE_PREFIX + MESSAGE_QUEUE_DOWN)
        except TransitionNotAllowed:
            pass
        raise SubmissionRejected(MESSAGE_QUEUE_DOWN, status_code=503)


CAUSE_NO_CAMERA = "no camera: the user chose the document step"
CAUSE_FACE_PATH_OFF = "face path off for this age limit: straight to the document step"


def document_path_choose(*, session: VerificationSession, cause: str = CAUSE_NO_CAMERA) -> VerificationSession:
    """Skip the selfie and ask for a document (initiated -> processing -> requires_doc)."""
    session_transition(session_id=session.id, to=Status.PROCESSING, expected_from=(Status.INITIATED,), cause=cause)
    return session_transition(session_id=session.id, to=Status.REQUIRES_DOC, expected_from=(Status.PROCESSING,),
                              cause=cause)


def retake_message(session: VerificationSession) -> str | None:
    """The message of the retake that sent the session back to its current step, if that is how it got there."""
    if session.status not in (Status.INITIATED, Status.REQUIRES_DOC):
        return None
    last = SessionEvent.objects.filter(session=session).order_by("-id").first()
    if last is None or last.to_status != session.status or not last.cause.startswith(RETAKE_CAUSE_PREFIX):
        return None
    return last.cause[len(RETAKE_CAUSE_PREFIX):]


# --- worker side: analyse and decide -------------------------------------------------------------

def _session_to_analyse(session_id: str) -> VerificationSession | None:
    session = VerificationSession.objects.select_related("tenant").filter(pk=session_id).first()
    if session is None or session.status != Status.PROCESSING:
        # Cancelled or expired while queued: nothing to decide, and the images are dropped unseen.
        logger.info("analysis of %s skipped: session is %s", session_id, session.status if session else "gone")
        return None
    return session


def _apply(session: VerificationSession, decision: Decision, *, step: str, counter: str) -> None:
    cause = f"{step} analysed"
    if decision.is_retake:
        cause = (RETAKE_CAUSE_PREFIX + decision.retake_message)[:200]
    try:
        with transaction.atomic():
            # Time ran out while the pictures waited or were checked: the session ends as expired, as
            # any read of it would make it, whether the expiry sweep or this worker comes first.
            locked = VerificationSession.objects.select_for_update().get(pk=session.id)
            if session_expire_if_due(locked) is not locked:
                logger.info("decision on %s dropped: the session expired during its analysis", session.id)
                return
            session_transition(
                session_id=session.id, to=decision.to_status, reason=decision.reason, cause=cause,
                expected_from=(Status.PROCESSING,), results=decision.results, **{counter: F(counter) + 1},
            )
    except TransitionNotAllowed:
        logger.info("decision on %s dropped: the session left processing meanwhile", session.id)


def selfie_analyse(*, session_id: str, frames: list[tuple[str, bytes]]) -> None:
    """Run liveness, then age estimation on the most frontal frames, and apply the decision."""
    from checks.age import estimate_age
    from checks.liveness import check_liveness, frontal_frames
    from checks.results import Retake

    session = _session_to_analyse(session_id)
    if session is None:
        return
    try:
        liveness = check_liveness(frames, list(session.liveness_challenge))
        age = None
        if not isinstance(liveness, Retake) and liveness.is_live:
            age = estimate_age(frontal_frames(frames, list(session.liveness_challenge)))
    except Exception:
        logger.exception("selfie checks failed on %s", session_id)
        liveness, age = Retake(MESSAGE_CHECK_FAILED), None
    decision = decide_selfie(
        liveness, age, rule=tenant_face_rule(session.tenant, session.age_limit),
        attempts_so_far=session.selfie_attempts,
    )
    _apply(session, decision, step="selfie", counter="selfie_attempts")


def document_analyse(*, session_id: str, image: bytes) -> None:
    """Read the document's machine-readable data and apply the decision."""
    from checks.document import read_document
    from checks.results import Retake

    session = _session_to_analyse(session_id)
    if session is None:
        return
    try:
        document = read_document(image)
    except Exception:
        logger.exception("document check failed on %s", session_id)
        document = Retake(MESSAGE_CHECK_FAILED)
    decision = decide_document(
        document, age_limit=session.age_limit, today=timezone.now().date(),
        attempts_so_far=session.document_attempts,
    )
    _apply(session, decision, step="document", counter="document_attempts")


# --- watchdog: analyses that will never come ----------------------------------------------------

def stuck_analyses_release(*, batch_size: int = 200) -> int:
    """Send live sessions stuck in `processing` back to the step they were on; returns how many.

    Sandbox sessions are left alone (a partner may park one in processing on purpose), and so are
    sessions past their expiry, which the expiry task finalizes as denied/expired.
    """
    now = timezone.now()
    cutoff = now - timedelta(seconds=ANALYSIS_TASK_EXPIRES + STUCK_ANALYSIS_MARGIN)
    stuck = VerificationSession.objects.filter(
        status=Status.PROCESSING, mode=Mode.LIVE, updated_at__lte=cutoff, expires_at__gt=now
    ).order_by("updated_at")
    stuck_ids = list(stuck.values_list("id", flat=True)[:batch_size])
    return sum(_stuck_analysis_release(session_id, cutoff) for session_id in stuck_ids)


@transaction.atomic
def _stuck_analysis_release(session_id: str, cutoff) -> bool:
    # Locked and checked again: a decision, a cancel or a new submission since the query wins.
    session = VerificationSession.objects.select_for_update().filter(
        pk=session_id, status=Status.PROCESSING, updated_at__lte=cutoff
    ).first()
    if session is None:
        return False
    entered = SessionEvent.objects.filter(session=session, to_status=Status.PROCESSING).order_by("-id").first()
    step = entered.from_status if entered is not None else Status.INITIATED
    # No attempt counter moves: the user's pictures were never judged.
    session_transition(session_id=session_id, to=step, expected_from=(Status.PROCESSING,),
                       cause=RETAKE_CAUSE_PREFIX + MESSAGE_ANALYSIS_LOST)
    logger.warning("analysis of %s never came: sent back to %s", session_id, step)
    return True
