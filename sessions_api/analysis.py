"""The worker side of an analysis: run the checks on a submitted selfie or document and apply the decision.

The worker (`selfie_analyse` / `document_analyse`, called by the Celery tasks in sessions_api.tasks)
runs the checks on the bytes in memory, applies the decision rule (sessions_api.decision) and stores
only the result numbers, through the state machine. Our code never writes an image to disk; the
bytes go when the task ends. A retake sends the session back (processing -> initiated for a selfie,
-> requires_doc for a document) with the message to show, which is kept in the transition's event
`message`. The web side is sessions_api.submission, the watchdog of lost analyses sessions_api.watchdog.
"""

from __future__ import annotations

import dataclasses
import logging

from django.db import transaction
from django.utils import timezone

from .age_assurance.policy import tenant_face_rule
from .decision import MESSAGE_HEAD_TURNS_MISSING, Decision, Presence, decide_document, decide_selfie
from .models import Status, VerificationSession
from .selectors import SessionNotFound, session_get, session_presence_required
from .state_machine import TransitionNotAllowed, session_expire_if_due, session_transition

logger = logging.getLogger(__name__)

RETAKE_CAUSE_PREFIX = "retake: "
# An unconsumed analysis message is dropped after this many seconds (no backlog keeps images around).
ANALYSIS_TASK_EXPIRES = 10 * 60
MESSAGE_CHECK_FAILED = "Something went wrong while checking your picture. Please try again."


def _session_to_analyse(session_id: str) -> VerificationSession | None:
    try:
        session = session_get(session_id=session_id)
    except SessionNotFound:
        session = None
    if session is None or session.status != Status.PROCESSING:
        # Cancelled or expired while queued: nothing to decide, and the images are dropped unseen.
        logger.info("analysis of %s skipped: session is %s", session_id, session.status if session else "gone")
        return None
    return session


def _apply(session: VerificationSession, decision: Decision) -> None:
    cause = f"{session.step} analysed"
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
                session_id=session.id,
                to=decision.to_status,
                reason=decision.reason,
                cause=cause,
                expected_from=(Status.PROCESSING,),
                results=decision.results,
                count_attempt=True,
                message=decision.retake_message or "",
            )
    except TransitionNotAllowed:
        logger.info("decision on %s dropped: the session left processing meanwhile", session.id)


def selfie_analyse(*, session_id: str, frames: list[tuple[str, bytes]], capture: dict | None = None) -> None:
    """Run liveness (with the page's capture record, when it sent one), then age estimation on the most
    frontal frames, and apply the decision."""
    from checks.age import estimate_age
    from checks.liveness import Capture, check_liveness, frontal_frames
    from checks.results import Retake

    session = _session_to_analyse(session_id)
    if session is None:
        return
    try:
        record = None
        if capture is not None:
            record = Capture(capture["label"], tuple(capture["times"]), tuple(capture["durations"]))
        flag_only = frozenset(session.tenant.liveness_flag_only or [])
        liveness = check_liveness(frames, list(session.liveness_challenge), record, flag_only=flag_only)
        age = None
        if not isinstance(liveness, Retake) and liveness.is_live:
            age = estimate_age(frontal_frames(frames, list(session.liveness_challenge)))
    except Exception:
        logger.exception("selfie checks failed on %s", session_id)
        liveness, age = Retake(MESSAGE_CHECK_FAILED), None
    decision = decide_selfie(
        liveness,
        age,
        rule=tenant_face_rule(session.tenant, session.age_limit),
        attempts_so_far=session.selfie_attempts,
    )
    _apply(session, decision)


def document_analyse(
    *, session_id: str, image: bytes, back: bytes | None = None, frames: list[tuple[str, bytes]] | None = None
) -> None:
    """Read the document's machine-readable data (the back first when given); under the presence policy,
    check the head-turn capture that came with it and match its face with the document's portrait; decide."""
    from checks.document import read_document_sides
    from checks.results import DocumentData, Retake
    from checks.zones import zones_agree

    session = _session_to_analyse(session_id)
    if session is None:
        return
    images = [image] + ([back] if back else [])
    presence = None
    try:
        document = read_document_sides(images)
        if isinstance(document, DocumentData) and document.checks_valid:
            document = dataclasses.replace(
                document,
                zones_agree=zones_agree(images[:1], birthdate=document.birthdate, expiry_date=document.expiry_date),
            )
        if session_presence_required(session) and isinstance(document, DocumentData) and document.checks_valid:
            presence = _presence_check(images, frames or [], list(session.liveness_challenge))
    except Exception:
        logger.exception("document check failed on %s", session_id)
        document = Retake(MESSAGE_CHECK_FAILED)
    decision = decide_document(
        document,
        age_limit=session.age_limit,
        today=timezone.now().date(),
        attempts_so_far=session.document_attempts,
        presence=presence,
    )
    _apply(session, decision)


def _presence_check(images: list[bytes], frames: list[tuple[str, bytes]], challenge: list[str]) -> Presence:
    """The liveness of the capture sent with the document, then the holder match on its frontal frames."""
    from checks.face_match import holder_match
    from checks.liveness import check_liveness, frontal_frames
    from checks.results import Retake

    if not frames or not challenge:
        return Presence(liveness=Retake(MESSAGE_HEAD_TURNS_MISSING), holder=None)
    liveness = check_liveness(frames, challenge)
    if isinstance(liveness, Retake) or not liveness.is_live:
        return Presence(liveness=liveness, holder=None)
    return Presence(liveness=liveness, holder=holder_match(frontal_frames(frames, challenge), images))
