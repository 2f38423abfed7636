"""The decision rule of CONTRACT 3: check results in, the session's next status out. Pure, no database.

`decide_selfie` and `decide_document` take what the checks returned (a result or a `Retake`) and the
rule in force (for a face: the calibrated policy made stricter by the tenant, see
sessions_api.age_policy), and return a `Decision`: the status to move to, the reason, the message to show
on a retake, and the numbers to store. Every failed or unusable attempt counts; the attempt that
reaches `max_attempts` stops asking again: a document's last attempt ends the session, a selfie's leads to
the document step (docs/contract.md), where the document, and the digital ID where the tenant offers it,
may still prove the age.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from django.utils.translation import gettext_noop

from checks.document import age_on
from checks.results import AgeReading, DocumentData, HolderMatch, Liveness, Retake

from .age_policy import FaceRule
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
    # False: the attempt costs the user nothing: the service failed (an error, the time limit), or the picture
    # was sent back before any check was spent on it (checks.results.Retake.spends_attempt).
    counts_attempt: bool = True

    @property
    def is_retake(self) -> bool:
        return self.retake_message is not None


def _age_result(age: AgeReading, rule: FaceRule) -> dict:
    return {"estimated_age": float(age.estimated_age), "age_confidence": float(rule.confidence(age))}


def _liveness_result(liveness: Liveness) -> dict:
    return {
        "is_live": bool(liveness.is_live),
        "liveness_score": float(liveness.liveness_score),
        "signals": list(liveness.signals),
    }


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
    Nor does a selfie that failed: after the last attempt the document step is the way left (the result of a
    failed liveness check is kept, as the API shows it).
    """
    last_attempt = attempts_so_far + 1 >= max_attempts
    if isinstance(liveness, Retake):
        return _selfie_retake(liveness.message, last_attempt)
    if not liveness.is_live:
        if last_attempt:
            return Decision(Status.REQUIRES_DOC, results=Results(liveness=_liveness_result(liveness)))
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
        return Decision(Status.REQUIRES_DOC)
    return Decision(Status.INITIATED, retake_message=message)


MESSAGE_DOCUMENT_EXPIRED = gettext_noop(
    "This document has expired. Take a picture of another document that is still valid, for example your passport."
)
MESSAGE_DOCUMENT_UNREADABLE = gettext_noop(
    "We could not read the machine-readable lines of your document correctly. Take a sharper picture, flat "
    "and in good light, or use another document."
)
MESSAGE_ZONES_DISAGREE = gettext_noop(
    "The dates printed on your document do not match its machine-readable lines. Take a sharper picture, "
    "flat and in good light, or use another document."
)
MESSAGE_HEAD_TURNS_MISSING = gettext_noop(
    "Do the head turns as well, after the document: they show that the document's holder is here."
)
MESSAGE_HOLDER_MISMATCH = gettext_noop(
    "The face in front of the camera does not look like the photo on the document. Use your own document, "
    "and look straight at the camera in good light."
)


@dataclass(frozen=True)
class Presence:
    """What the presence policy checked with the document: the head-turn capture and the holder match.

    `liveness` and `holder` are None when that check could not run (no capture, liveness failed first).
    """

    liveness: Liveness | Retake | None
    holder: HolderMatch | Retake | None


def document_accepted(document: DocumentData | Retake, *, today: datetime.date) -> bool:
    """Whether the document passes its own checks (read, check digits, printed dates, expiry), the ones
    `decide_document` makes before it looks at the holder: a document that does may be kept for a retake
    of the head turns alone (sessions_api.evidence)."""
    return (
        isinstance(document, DocumentData)
        and document.checks_valid
        and document.zones_agree is not False
        and not (document.expiry_date is not None and document.expiry_date < today)
    )


def decide_document(
    document: DocumentData | Retake,
    *,
    age_limit: int,
    today: datetime.date,
    attempts_so_far: int,
    max_attempts: int = MAX_ATTEMPTS,
    presence: Presence | None = None,
) -> Decision:
    """Decide a document attempt; `today` is the decision date in UTC (CONTRACT 3).

    `presence` is given when the tenant's presence policy applies: the document then counts only with a
    live capture of the same session whose face matches the document's portrait. Every failure but an
    underage document asks again (another picture, another document) until the last attempt, which denies.
    """
    last_attempt = attempts_so_far + 1 >= max_attempts

    def again(message: str, reason: str, results: Results | None = None) -> Decision:
        if last_attempt:
            return Decision(Status.DENIED, reason, results=results)
        return Decision(Status.REQUIRES_DOC, retake_message=message)

    if isinstance(document, Retake):
        return again(document.message, Reason.ATTEMPTS_EXCEEDED)
    if not document.checks_valid:
        # Nothing read from a document whose check digits fail can be trusted, its birthdate included.
        return again(MESSAGE_DOCUMENT_UNREADABLE, Reason.DOCUMENT_INVALID)
    if document.zones_agree is False:
        # The printed date of birth or expiry is not the machine-readable one: which one to trust is unclear.
        return again(MESSAGE_ZONES_DISAGREE, Reason.DOCUMENT_INVALID)
    true_age = age_on(document.birthdate, today)
    read = {
        "document_kind": document.kind,
        "birthdate": document.birthdate,
        "true_age": max(true_age, 0),
        "expiry_date": document.expiry_date,
        "liveness_checked": False,
        "holder_match_score": None,
        "holder_match_passed": None,
    }
    if document.expiry_date is not None and document.expiry_date < today:
        return again(MESSAGE_DOCUMENT_EXPIRED, Reason.DOCUMENT_EXPIRED, Results(document=read))
    liveness = None
    if presence is not None:
        if presence.liveness is None or isinstance(presence.liveness, Retake):
            message = presence.liveness.message if presence.liveness else MESSAGE_NOT_LIVE
            return again(message, Reason.ATTEMPTS_EXCEEDED)
        liveness = _liveness_result(presence.liveness)
        if not presence.liveness.is_live:
            return again(MESSAGE_NOT_LIVE, Reason.LIVENESS_FAILED, Results(liveness=liveness))
        if isinstance(presence.holder, Retake) and not presence.holder.spends_attempt:
            # The portrait could not have been matched: asked again, the attempt not spent, never a denial.
            return Decision(Status.REQUIRES_DOC, retake_message=presence.holder.message, counts_attempt=False)
        if presence.holder is None or isinstance(presence.holder, Retake):
            message = presence.holder.message if presence.holder else MESSAGE_HOLDER_MISMATCH
            return again(message, Reason.ATTEMPTS_EXCEEDED, Results(liveness=liveness))
        read.update(
            liveness_checked=True,
            holder_match_score=float(presence.holder.score),
            holder_match_passed=bool(presence.holder.matched),
        )
        if not presence.holder.matched:
            return again(MESSAGE_HOLDER_MISMATCH, Reason.DOCUMENT_MISMATCH, Results(liveness=liveness, document=read))
    results = Results(liveness=liveness, document=read)
    if true_age >= age_limit:
        return Decision(Status.APPROVED, Reason.DOCUMENT, results=results)
    return Decision(Status.DENIED, Reason.UNDERAGE_DOCUMENT, results=results)
