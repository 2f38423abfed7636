"""The worker side of an analysis: run the checks on a submitted selfie or document and apply the decision.

The worker (`selfie_analyse` / `document_analyse`, called by the Celery tasks in sessions_api.tasks)
runs the checks on the bytes in memory, applies the decision rule (sessions_api.decision) and stores
only the result numbers, through the state machine. Our code never writes an image to disk; the
bytes go when the task ends. A retake sends the session back (processing -> initiated for a selfie,
-> requires_doc for a document) with the message to show, which is kept in the transition's event
`message`. The web side is sessions_api.submission, the watchdog of lost analyses sessions_api.watchdog.

Under the presence policy the document step's holder check has two halves, a live face (a head-turn
capture that passed liveness) and the document's portrait. The half that passed is kept, sealed, in the
same transaction as the decision that sends the session to the document step (sessions_api.evidence): the
selfie's face when the face was not enough for the age limit, so the document step asks for no second
capture; after a document attempt, whichever half passed, so the retake asks only for the other.
"""

from __future__ import annotations

import dataclasses
import logging

from celery.exceptions import SoftTimeLimitExceeded
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from checks.images import decoded_once
from checks.results import HolderMatch

from .age_policy import tenant_face_rule
from .decision import (
    MESSAGE_HEAD_TURNS_MISSING,
    Decision,
    Presence,
    decide_document,
    decide_selfie,
    document_accepted,
)
from .evidence import Evidence, KeptDocument, LiveFace, evidence_keep, session_evidence
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


def _server_failure(to_status: str) -> Decision:
    """The checks failed on the service's side (an error, the time limit): the user is asked again, and the
    attempt does not count, even on the last one (the picture was never judged)."""
    return Decision(to_status, retake_message=MESSAGE_CHECK_FAILED, counts_attempt=False)


def _out_of_time(session_id: str, to_status: str) -> None:
    """The task's soft time limit (ANALYSIS_SOFT_TIME_LIMIT) struck outside the checks and the write, which
    handle it: while the session was read (a database slow to answer) or the decision made.

    The limit strikes once. The attempt ends as a retake without checks that costs no attempt, as it would have
    had the limit struck inside them, so the session is never left in `processing`; a session already decided
    (the limit struck after the write) is left as it is.
    """
    logger.warning("analysis of %s ran out of time outside its checks: a retake", session_id)
    # The limit may have struck while a query ran: psycopg's connection is then still busy with it and refuses
    # the next one, so it is dropped (the next query opens another). No transaction is open here: one that
    # was (in _apply) has dropped it already, as Django does with a connection that cannot roll back.
    connection = connections[DEFAULT_DB_ALIAS]
    if not connection.in_atomic_block:  # only a test runs this inside a transaction (pytest-django's `db`)
        connection.close()
    session = _session_to_analyse(session_id)
    if session is not None:
        _apply(session, _server_failure(to_status))


def _apply(session: VerificationSession, decision: Decision, *, evidence: Evidence | None = None) -> None:
    """Apply the decision; `evidence` is what the session keeps afterwards if it stays open (None: no change).

    The soft time limit striking while it is written rolls the write back (a connection cut off mid-query
    cannot roll back: Django then drops it); it is then made again (the limit strikes once), so a decided
    session never stays in `processing`."""
    try:
        _apply_once(session, decision, evidence=evidence)
    except SoftTimeLimitExceeded:
        logger.warning("decision on %s ran out of time while written: written again", session.id)
        _apply_once(session, decision, evidence=evidence)


def _apply_once(session: VerificationSession, decision: Decision, *, evidence: Evidence | None) -> None:
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
                count_attempt=decision.counts_attempt,
                message=decision.retake_message or "",
            )
            if evidence is not None:
                evidence_keep(session_id=session.id, evidence=evidence)  # a final session keeps nothing
    except TransitionNotAllowed:
        logger.info("decision on %s dropped: the session left processing meanwhile", session.id)


def selfie_analyse(*, session_id: str, frames: list[tuple[str, bytes]], capture: dict | None = None) -> None:
    """Run liveness (with the page's capture record, when it sent one), then age estimation on the most
    frontal frames, and apply the decision."""

    try:
        with decoded_once():  # each frame decoded once for liveness, age and the live face
            _selfie_analyse(session_id, frames, capture)
    except SoftTimeLimitExceeded:
        _out_of_time(session_id, Status.INITIATED)


def _selfie_decision(session: VerificationSession, liveness, age) -> Decision:
    return decide_selfie(
        liveness,
        age,
        rule=tenant_face_rule(session.tenant, session.age_limit),
        attempts_so_far=session.selfie_attempts,
    )


def _selfie_analyse(session_id: str, frames: list[tuple[str, bytes]], capture: dict | None) -> None:
    from checks.age import estimate_age
    from checks.liveness import frontal_frames
    from checks.results import Retake

    session = _session_to_analyse(session_id)
    if session is None:
        return
    frontal: list[bytes] = []
    age = None
    try:
        liveness = _liveness_check(session, frames, list(session.liveness_challenge), capture)
        if not isinstance(liveness, Retake) and liveness.is_live:
            frontal = frontal_frames(frames, list(session.liveness_challenge))
            age = estimate_age(frontal)
    except Exception:  # the soft time limit striking inside the checks too
        logger.exception("selfie checks failed on %s", session_id)
        _apply(session, _server_failure(Status.INITIATED))
        return
    decision = _selfie_decision(session, liveness, age)
    evidence = None
    face_not_enough = decision.results is not None and decision.results.age_estimation is not None
    if decision.to_status == Status.REQUIRES_DOC and face_not_enough and session_presence_required(session):
        # The face was not enough: the document step compares its portrait with this capture's face (a selfie
        # whose attempts ran out leads there too, but its capture is no evidence of anything).
        evidence = Evidence(live_face=_live_face(frontal, liveness))
    _apply(session, decision, evidence=evidence)


def _liveness_check(
    session: VerificationSession, frames: list[tuple[str, bytes]], challenge: list[str], capture: dict | None
):
    """checks.liveness on head turns, with the page's capture record when it sent one (queued by
    sessions_api.submission), refusing or only flagging each signal as the session's tenant chose."""
    from checks.liveness import Capture, check_liveness

    record = None
    if capture is not None:
        record = Capture(
            capture["label"],
            tuple(capture["times"]),
            tuple(capture["durations"]),
            flash=tuple(capture.get("flash") or ()),  # absent from records queued before the colour flash
            shown=tuple(capture.get("shown") or ()),
        )
    flag_only = frozenset(session.tenant.liveness_flag_only or [])
    return check_liveness(frames, challenge, record, flag_only=flag_only)


def _live_face(frontal: list[bytes], liveness) -> LiveFace | None:
    """The face of a capture that passed liveness (the mean descriptor of its frontal frames), or None."""
    from checks.face_match import live_descriptor

    try:
        descriptor = live_descriptor(frontal) if frontal else None
    except Exception:  # the document step then asks for the head turns again
        logger.exception("the live face's descriptor could not be computed")
        return None
    if descriptor is None:
        return None
    return LiveFace(descriptor.numbers(), float(liveness.liveness_score))


def document_analyse(
    *,
    session_id: str,
    image: bytes | None,
    back: bytes | None = None,
    frames: list[tuple[str, bytes]] | None = None,
    capture: dict | None = None,
) -> None:
    """Read the document's machine-readable data (the back first when given), or take the document kept from an
    earlier attempt when no picture came; under the presence policy, check the holder (the head turns sent
    with it, judged with their capture record as the selfie's, or the passed capture kept, against the
    document's portrait); decide, and keep what passed."""

    try:
        with decoded_once():  # each picture decoded once for the reading, the printed dates and the portrait
            _document_analyse(session_id, image, back, frames or [], capture)
    except SoftTimeLimitExceeded:
        _out_of_time(session_id, Status.REQUIRES_DOC)


def _document_decision(session: VerificationSession, document, today, presence: Presence | None) -> Decision:
    return decide_document(
        document,
        age_limit=session.age_limit,
        today=today,
        attempts_so_far=session.document_attempts,
        presence=presence,
    )


def _document_analyse(
    session_id: str,
    image: bytes | None,
    back: bytes | None,
    frames: list[tuple[str, bytes]],
    capture: dict | None,
) -> None:

    session = _session_to_analyse(session_id)
    if session is None:
        return
    kept = session_evidence(session)
    today = timezone.now().date()
    presence, halves = None, None  # halves: what passed of the holder check (None: what is kept stays)
    try:
        document = _document_read(image, back, kept)
        if session_presence_required(session):
            presence, halves = _presence_check(session, document, image, back, frames, capture, kept, today=today)
    except Exception:  # the soft time limit striking inside the checks too
        logger.exception("document check failed on %s", session_id)
        _apply(session, _server_failure(Status.REQUIRES_DOC))  # what earlier attempts kept stays
        return
    decision = _document_decision(session, document, today, presence)
    mismatch = presence is not None and isinstance(presence.holder, HolderMatch) and not presence.holder.matched
    # A holder mismatch may be either half's fault: both are asked again.
    _apply(session, decision, evidence=Evidence() if mismatch else halves)


def _document_read(image: bytes | None, back: bytes | None, kept: Evidence):
    from checks.document import read_document_sides
    from checks.results import DocumentData, Retake
    from checks.zones import zones_agree

    if image is None:  # only head turns came: the document is the one kept from an earlier attempt
        if kept.document is None:
            return Retake(MESSAGE_CHECK_FAILED)
        return DocumentData(
            kind=kept.document.kind,
            birthdate=kept.document.birthdate,
            expiry_date=kept.document.expiry_date,
            checks_valid=True,
            problem=None,
            zones_agree=kept.document.zones_agree,
        )
    images = [image] + ([back] if back else [])
    document = read_document_sides(images)
    if isinstance(document, DocumentData) and document.checks_valid:
        document = dataclasses.replace(
            document,
            zones_agree=zones_agree(images[:1], birthdate=document.birthdate, expiry_date=document.expiry_date),
        )
    return document


def _presence_check(
    session: VerificationSession,
    document,
    image: bytes | None,
    back: bytes | None,
    frames: list[tuple[str, bytes]],
    capture: dict | None,
    kept: Evidence,
    *,
    today,
) -> tuple[Presence, Evidence]:
    """The holder check's two halves: the live face (the head turns sent now, which must pass liveness as a
    selfie's do, with their capture record, or the passed capture kept) and, for a document that passes its
    own checks, its portrait (read from the pictures, or kept); then the match. Returns it with the halves
    that passed, to keep on a retake."""
    from checks.face_match import (
        MESSAGE_NO_LIVE_FACE,
        MESSAGE_NO_PORTRAIT,
        FaceDescriptor,
        compare,
        document_portrait,
        portrait_problem,
    )
    from checks.liveness import frontal_frames
    from checks.results import Liveness, Retake

    challenge = list(session.liveness_challenge)
    live_face = None
    if frames and challenge:
        liveness = _liveness_check(session, frames, challenge, capture)
        if not isinstance(liveness, Retake) and liveness.is_live:
            live_face = _live_face(frontal_frames(frames, challenge), liveness)
    elif kept.live_face is not None:
        liveness, live_face = Liveness(is_live=True, liveness_score=kept.live_face.liveness_score), kept.live_face
    else:
        liveness = Retake(MESSAGE_HEAD_TURNS_MISSING)
    kept_document, problem = None, None
    if document_accepted(document, today=today):
        if image is not None:
            found = document_portrait([image] + ([back] if back else []))
            problem = portrait_problem(found) if found is not None else None
            portrait = found.numbers() if found is not None and problem is None else None
        else:
            portrait = kept.document.portrait
        if portrait is not None:
            kept_document = KeptDocument(
                kind=document.kind,
                birthdate=document.birthdate,
                expiry_date=document.expiry_date,
                zones_agree=document.zones_agree,
                portrait=portrait,
            )
    halves = Evidence(live_face=live_face, document=kept_document)
    if isinstance(liveness, Retake) or not liveness.is_live:
        return Presence(liveness=liveness, holder=None), halves
    if kept_document is None:
        holder = problem or Retake(MESSAGE_NO_PORTRAIT)
    elif live_face is None:
        holder = Retake(MESSAGE_NO_LIVE_FACE)
    else:
        live, portrait = (
            FaceDescriptor.from_numbers(live_face.descriptor),
            FaceDescriptor.from_numbers(kept_document.portrait),
        )
        if live is None:  # kept by an earlier version, without the face's age: the head turns again
            holder = Retake(MESSAGE_NO_LIVE_FACE)
        elif portrait is None:
            holder = Retake(MESSAGE_NO_PORTRAIT)
        else:
            holder = compare(live, portrait)
    return Presence(liveness=liveness, holder=holder), halves


def analysis_models_load() -> None:
    """Load every model the checks use (an analysis worker's process, as it starts: ageverify.celery)."""
    import time

    from checks.face_match import face_matcher
    from checks.faces import face_engine
    from checks.passive import passive_models

    started = time.monotonic()
    face_engine()
    passive_models()
    face_matcher()
    logger.info("analysis models loaded in %.1f s", time.monotonic() - started)
