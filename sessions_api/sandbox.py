"""Sandbox sessions (CONTRACT 7): test-key sessions moved to a chosen outcome without running any model.

`sandbox_advance` walks the same state machine as a real verification (approving a fresh session
goes initiated -> processing -> approved), stores fixed, plausible result numbers, and so sends the
same webhook. The partner's API call and the web flow's outcome buttons both come here.
"""

import datetime
import math

from django.db import transaction
from django.utils import timezone

from checks.face_match import MATCH_THRESHOLD
from checks.results import AgeReading

from .age_policy import FaceRule, tenant_face_rule
from .models import Mode, ProofAge, Reason, Status, Step, VerificationSession
from .state_machine import ENDS_ANY_OPEN_SESSION, Results, TransitionNotAllowed, session_transition

TARGETS = (Status.PROCESSING, Status.REQUIRES_DOC, Status.APPROVED, Status.DENIED)

# Fixed numbers, relative to the session's age limit and the policy in force, so every age limit gets a
# consistent story: an approving estimate clears the tenant's threshold by this margin, as a real approval
# would, and every ageConfidence is the calibrated policy's for that estimate.
APPROVED_MARGIN_OVER_THRESHOLD = 2
UNSURE_AGE_OFFSET = 1
LIVE_SCORE, NOT_LIVE_SCORE = 0.97, 0.12
DOCUMENT_ADULT_OFFSET, DOCUMENT_MINOR_OFFSET = 7, -2
DOCUMENT_EXPIRED_DAYS_AGO = 30
# Holder match scores (checks.face_match: the fused score, a probability) of the same person and of another.
HOLDER_MATCH_SCORE, HOLDER_MISMATCH_SCORE = 0.72, 0.31


class NotASandboxSession(Exception):
    """Only test-mode sessions may be advanced by hand."""


def _years_ago(today: datetime.date, years: int) -> datetime.date:
    try:
        return today.replace(year=today.year - years)
    except ValueError:  # 29 February in a year that has none
        return today.replace(year=today.year - years, day=28)


def _document_result(age_limit: int, true_age: int, *, holder_score: float | None = HOLDER_MATCH_SCORE) -> dict:
    """What a document read gives; `holder_score` None: read without a live capture (presence policy off)."""
    today = timezone.now().date()
    # 40 days past the birthday: the age is the same all day long in every time zone.
    birthdate = _years_ago(today, true_age) - datetime.timedelta(days=40)
    return {
        "document_kind": "sandbox",
        "birthdate": birthdate,
        "true_age": true_age,
        "expiry_date": _years_ago(today, -5),
        "liveness_checked": holder_score is not None,
        "holder_match_score": holder_score,
        "holder_match_passed": None if holder_score is None else holder_score >= MATCH_THRESHOLD,
    }


def _document_results(
    session: VerificationSession, true_age: int, *, holder_score: float = HOLDER_MATCH_SCORE, **changes
) -> Results:
    """The document's results as the session's tenant policy gives them: with the live capture's liveness and
    holder match under the presence policy, the document alone without it."""
    # The tenant's policy as a live session would have it: sandbox sessions themselves run no check.
    presence = session.tenant.document_presence_required
    document = {
        **_document_result(session.age_limit, true_age, holder_score=holder_score if presence else None),
        **changes,
    }
    liveness = {"is_live": True, "liveness_score": LIVE_SCORE} if presence else None
    return Results(document=document, liveness=liveness)


def _selfie_results(rule: FaceRule, estimated_age: float) -> Results:
    confidence = round(rule.confidence(AgeReading(estimated_age=estimated_age, faces_used=1)), 2)
    return Results(
        age_estimation={"estimated_age": estimated_age, "age_confidence": confidence},
        liveness={"is_live": True, "liveness_score": LIVE_SCORE},
    )


def _approving_estimate(rule: FaceRule) -> float:
    estimated_age = float(math.ceil(rule.threshold) + APPROVED_MARGIN_OVER_THRESHOLD)
    while not rule.passes(AgeReading(estimated_age=estimated_age, faces_used=1)) and estimated_age < 100:
        estimated_age += 1  # a tenant's minimum confidence may ask for more than the threshold
    return estimated_age


# The reasons a sandbox session may be given for each outcome; the first is the default of its step.
REASONS_OF_TARGET = {
    Status.APPROVED: (Reason.AGE_ESTIMATION, Reason.DOCUMENT, Reason.DIGITAL_ID, Reason.AGE_PASS),
    Status.DENIED: (
        Reason.LIVENESS_FAILED,
        Reason.UNDERAGE_DOCUMENT,
        Reason.DOCUMENT_INVALID,
        Reason.DOCUMENT_EXPIRED,
        Reason.DOCUMENT_MISMATCH,
        Reason.UNDERAGE_DIGITAL_ID,
        Reason.ATTEMPTS_EXCEEDED,
        Reason.CANCELLED,
        Reason.EXPIRED,
    ),
}
# A wallet credential answers at either step, costs no attempt and leaves validateDoc null.
DIGITAL_ID_REASONS = (Reason.DIGITAL_ID, Reason.UNDERAGE_DIGITAL_ID)


def _digital_id_result(session: VerificationSession, reason: str) -> Results:
    return Results(
        age_credential={
            "kind": "mdoc",
            "doc_type": "eu.europa.ec.av.1",
            "claim": f"age_over_{session.age_limit:02d}",
            "value": reason == Reason.DIGITAL_ID,
            "issuer_country": "UT",
            "trust_source": "sandbox",
        }
    )


def _age_pass_result(session: VerificationSession) -> Results:
    """A pass proved by a document less than a month ago, shown for the session's limit."""
    return Results(
        age_pass={"method": "document", "thresholds": [session.age_limit], "proof_age": ProofAge.UNDER_1_MONTH}
    )


# Reasons only a document can give: a session on the selfie step is walked to the document step for them.
DOCUMENT_REASONS = (
    Reason.DOCUMENT,
    Reason.UNDERAGE_DOCUMENT,
    Reason.DOCUMENT_INVALID,
    Reason.DOCUMENT_EXPIRED,
    Reason.DOCUMENT_MISMATCH,
)
SELFIE_REASONS = (Reason.AGE_ESTIMATION, Reason.LIVENESS_FAILED)


def _document_decision(session: VerificationSession, to: str, reason: str) -> dict:
    limit = session.age_limit
    counter = {"count_attempt": True}
    if to == Status.APPROVED:
        return {
            "to": to,
            "reason": Reason.DOCUMENT,
            "results": _document_results(session, limit + DOCUMENT_ADULT_OFFSET),
            **counter,
        }
    if reason == Reason.DOCUMENT_EXPIRED:
        expired = Results(
            document={
                **_document_result(limit, limit + DOCUMENT_ADULT_OFFSET, holder_score=None),
                "expiry_date": timezone.now().date() - datetime.timedelta(days=DOCUMENT_EXPIRED_DAYS_AGO),
            }
        )
        return {"to": to, "reason": reason, "results": expired, **counter}
    if reason == Reason.DOCUMENT_INVALID:
        return {"to": to, "reason": reason, **counter}  # nothing read from an invalid document is kept
    if reason == Reason.DOCUMENT_MISMATCH:
        return {
            "to": to,
            "reason": reason,
            **counter,
            "results": _document_results(session, limit + DOCUMENT_ADULT_OFFSET, holder_score=HOLDER_MISMATCH_SCORE),
        }
    true_age = max(limit + DOCUMENT_MINOR_OFFSET, 0)
    return {"to": to, "reason": Reason.UNDERAGE_DOCUMENT, "results": _document_results(session, true_age), **counter}


def _decision_step(session: VerificationSession, to: str, on_document: bool, reason: str = "") -> dict:
    """The transition out of `processing` that a real analysis would have made for this outcome."""
    limit = session.age_limit
    if reason == Reason.ATTEMPTS_EXCEEDED:
        return {"to": to, "reason": reason, "count_attempt": True}
    if reason in DIGITAL_ID_REASONS:
        return {"to": to, "reason": reason, "results": _digital_id_result(session, reason)}
    if reason == Reason.AGE_PASS:
        return {"to": to, "reason": reason, "results": _age_pass_result(session)}
    if on_document:
        if to in (Status.APPROVED, Status.DENIED):
            return _document_decision(session, to, reason)
        return {"to": to, "count_attempt": True}  # requires_doc again: a document retake
    rule = tenant_face_rule(session.tenant, limit)
    if (to == Status.APPROVED and not rule.face_path_on) or reason in DOCUMENT_REASONS:
        # The face path is off for this limit (a real session could only be approved by a document),
        # or the outcome is one only a document gives: that attempt counts as the document step's.
        return {**_decision_step(session, to, on_document=True, reason=reason), "step": Step.DOCUMENT}
    counter = {"count_attempt": True}
    if to == Status.APPROVED:
        return {
            "to": to,
            "reason": Reason.AGE_ESTIMATION,
            "results": _selfie_results(rule, _approving_estimate(rule)),
            **counter,
        }
    if to == Status.DENIED:
        return {
            "to": to,
            "reason": Reason.LIVENESS_FAILED,
            "results": Results(liveness={"is_live": False, "liveness_score": NOT_LIVE_SCORE}),
            **counter,
        }
    return {"to": to, "results": _selfie_results(rule, float(limit + UNSURE_AGE_OFFSET)), **counter}


def _check_reason(session: VerificationSession, to: str, reason: str) -> None:
    if not reason:
        return
    if reason not in REASONS_OF_TARGET.get(to, ()):
        raise ValueError(f"{reason!r} is not a reason of {to!r}")
    if reason == Reason.AGE_ESTIMATION and (
        session.step == Step.DOCUMENT or not tenant_face_rule(session.tenant, session.age_limit).face_path_on
    ):
        raise TransitionNotAllowed(f"{session.id}: no face can approve it (document step, or face path off)")
    if reason in SELFIE_REASONS and session.step == Step.DOCUMENT:
        raise TransitionNotAllowed(f"{session.id} is past the selfie step")


SANDBOX_CAUSE_PREFIX = "sandbox: "  # every sandbox move's cause starts so (the dashboard's funnel reads it)


@transaction.atomic
def sandbox_advance(
    *, session_id: str, to: str, reason: str = "", cause: str = SANDBOX_CAUSE_PREFIX + "advanced through the API"
) -> VerificationSession:
    """Move a test-mode session to `to` (for a final `to`, with `reason` if given) through the state machine.

    Raises ValueError for a reason that does not fit `to`, TransitionNotAllowed when the session cannot get there.
    """
    if to not in TARGETS:
        raise ValueError(f"cannot advance a session to {to!r}")
    session = VerificationSession.objects.select_for_update().get(pk=session_id)
    if session.mode != Mode.TEST:
        raise NotASandboxSession(session_id)
    if session.is_final:
        raise TransitionNotAllowed(f"{session_id} is already {session.status}")
    _check_reason(session, to, reason)
    on_document = session.step == Step.DOCUMENT
    if reason in ENDS_ANY_OPEN_SESSION:
        # Cancelled and expired end an open session wherever it is, without an analysis.
        steps = [{"to": to, "reason": reason}]
    elif session.status == Status.PROCESSING:
        if to == Status.PROCESSING:
            raise TransitionNotAllowed(f"{session_id} is already processing")
        if reason in DOCUMENT_REASONS and not on_document:
            raise TransitionNotAllowed(f"{session_id} is analysing a selfie, not a document")
        if reason in DIGITAL_ID_REASONS or reason == Reason.AGE_PASS:
            raise TransitionNotAllowed(f"{session_id} is analysing a picture, not a wallet answer or an age pass")
        steps = [_decision_step(session, to, on_document, reason)]
    elif to == Status.PROCESSING:
        steps = [{"to": Status.PROCESSING}]
    elif to == Status.REQUIRES_DOC and on_document:
        raise TransitionNotAllowed(f"{session_id} is already waiting for a document")
    else:
        steps = [{"to": Status.PROCESSING}, _decision_step(session, to, on_document, reason)]
    for transition in steps:
        session = session_transition(session_id=session_id, cause=cause, **transition)
    return session
