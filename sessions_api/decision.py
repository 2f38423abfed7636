"""The decision rule of CONTRACT 3: check results in, the session's next status out. Pure, no database.

`decide_selfie` and `decide_document` take what the checks returned (a result or a `Retake`) and the
rule in force (for a face: the calibrated policy made stricter by the tenant, see
sessions_api.age_assurance.policy), and return a `Decision`: the status to move to, the reason, the message to show
on a retake, and the numbers to store. Every failed or unusable attempt counts; the attempt that
reaches `max_attempts` ends the session instead of asking again.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.utils.translation import gettext_noop

from checks.document import age_on
from checks.results import AgeReading, DocumentData, Liveness, Retake

from .age_assurance.policy import FaceRule
from .models import Reason, Status
from .state_machine import Results

MAX_ATTEMPTS = 3

MESSAGE_NOT_LIVE = gettext_noop(
    "We could not confirm that this was a live person in front of the camera. "
    "Follow each instruction and turn your head slowly."
)


@dataclass(frozen=True)
class Decision:
    to_status: str
    reason: str = ""
    retake_message: str | None = None  # set exactly when the user is asked to try again
    results: Results | None = None

    @property
    def is_retake(self) -> bool:
        return self.retake_message is not None


def _age_result(age: AgeReading, rule: FaceRule) -> dict:
    return {"estimated_age": float(age.estimated_age), "age_confidence": float(rule.confidence(age))}


def _liveness_result(liveness: Liveness) -> dict:
    return {"is_live": bool(liveness.is_live), "liveness_score": float(liveness.liveness_score)}


def decide_selfie(
    liveness: Liveness | Retake,
    age: AgeReading | Retake | None,
    *,
    rule: FaceRule,
    attempts_so_far: int,
    max_attempts: int = MAX_ATTEMPTS,
) -> Decision:
    """Decide a selfie attempt. `age` may be None when liveness did not pass (age was not estimated).

    `attempts_so_far` counts the earlier selfie attempts of the session, so this one is number
    `attempts_so_far + 1`. A face never denies a session on its own: a young-looking face, or an
    uncertain estimate, leads to the document step, and so does any face where the rule's face path is off.
    """
    last_attempt = attempts_so_far + 1 >= max_attempts
    if isinstance(liveness, Retake):
        return _selfie_retake(liveness.message, last_attempt)
    if not liveness.is_live:
        if last_attempt:
            return Decision(
                Status.DENIED, Reason.LIVENESS_FAILED, results=Results(liveness=_liveness_result(liveness))
            )
        return Decision(Status.INITIATED, retake_message=MESSAGE_NOT_LIVE)
    if age is None or isinstance(age, Retake):
        message = age.message if isinstance(age, Retake) else "We could not analyse the picture. Try again."
        return _selfie_retake(message, last_attempt)
    results = Results(age_estimation=_age_result(age, rule), liveness=_liveness_result(liveness))
    if rule.passes(age):
        return Decision(Status.APPROVED, Reason.AGE_ESTIMATION, results=results)
    return Decision(Status.REQUIRES_DOC, results=results)


def _selfie_retake(message: str, last_attempt: bool) -> Decision:
    if last_attempt:
        return Decision(Status.DENIED, Reason.ATTEMPTS_EXCEEDED)
    return Decision(Status.INITIATED, retake_message=message)


def decide_document(
    document: DocumentData | Retake,
    *,
    age_limit: int,
    today: datetime.date,
    attempts_so_far: int,
    max_attempts: int = MAX_ATTEMPTS,
) -> Decision:
    """Decide a document attempt; `today` is the decision date in UTC (CONTRACT 3)."""
    if isinstance(document, Retake):
        if attempts_so_far + 1 >= max_attempts:
            return Decision(Status.DENIED, Reason.ATTEMPTS_EXCEEDED)
        return Decision(Status.REQUIRES_DOC, retake_message=document.message)
    if not document.checks_valid:
        # Nothing read from a document whose check digits fail can be trusted, its birthdate included.
        return Decision(Status.DENIED, Reason.DOCUMENT_INVALID)
    true_age = age_on(document.birthdate, today)
    results = Results(
        document={
            "document_kind": document.kind,
            "birthdate": document.birthdate,
            "true_age": max(true_age, 0),
            "expiry_date": document.expiry_date,
        }
    )
    if document.expiry_date is not None and document.expiry_date < today:
        return Decision(Status.DENIED, Reason.DOCUMENT_EXPIRED, results=results)
    if true_age >= age_limit:
        return Decision(Status.APPROVED, Reason.DOCUMENT, results=results)
    return Decision(Status.DENIED, Reason.UNDERAGE_DOCUMENT, results=results)
