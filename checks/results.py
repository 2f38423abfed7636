"""Values the checks return: a result for the decision, or a request to retake the picture."""

from __future__ import annotations

import datetime
from dataclasses import dataclass


def gettext_noop(message: str) -> str:
    """Marks a user message for translation and returns it unchanged, as Django's function of that name does.

    The checks run without Django: they return the English text, the flow shows it in the user's
    language (`manage.py flow_messages` extracts every marked message into flow/locale/).
    """
    return message


@dataclass(frozen=True)
class Retake:
    """Not a decision: the picture could not be used and the user is asked to try again."""

    message: str  # user-facing, plain English marked with gettext_noop (translated where it is shown)
    # False when no check was spent on the picture (nothing in it could have succeeded): not counted as an attempt.
    spends_attempt: bool = True


@dataclass(frozen=True)
class AgeReading:
    """The face's estimated age; how sure to be that it clears an age limit is the policy's call."""

    # years; with several frames, the median over the frames that showed one face (the lower middle one for
    # an even count): what the policy holds against its threshold
    estimated_age: float
    faces_used: int  # frames the estimate is taken from (at least 1)
    # The lowest frame's estimate (reported to the research commands, not decided on), and the second opinion
    # read once per capture (checks.age_heads). None: not measured (a sandbox reading).
    lowest_estimate: float | None = None
    second_opinion: float | None = None
    # The most frontal frame's estimate: the one photo the statement measures, which must clear the threshold
    # too (sessions_api.age_policy). None: not measured.
    frontal_estimate: float | None = None


@dataclass(frozen=True)
class Liveness:
    is_live: bool
    liveness_score: float  # 0..1; is_live is exactly liveness_score >= 0.5
    # Attack signals that fired (checks.liveness.SIGNALS: virtualCamera, timing, replay), refusing or not.
    signals: tuple[str, ...] = ()


@dataclass(frozen=True)
class DocumentData:
    kind: str  # "mrz_td1" | "mrz_td3" | "aamva"
    birthdate: datetime.date
    expiry_date: datetime.date | None
    checks_valid: bool  # every MRZ check digit verified / AAMVA mandatory fields parse
    problem: str | None  # short internal explanation when checks_valid is False
    # The printed dates of the data page or front side against these (checks.zones): None when not checked.
    zones_agree: bool | None = None


@dataclass(frozen=True)
class HolderMatch:
    """How alike the live face and the document's portrait are (checks.face_match); a number, no template."""

    score: float  # 0..1, higher is more alike
    matched: bool  # score >= the threshold in force


@dataclass(frozen=True)
class AgeCredential:
    """What a verified wallet presentation proved about the age limit; nothing else of it is kept."""

    doc_type: str  # "eu.europa.ec.av.1" | "org.iso.18013.5.1.mDL"
    claim: str | None  # the element that settled it ("age_over_18"); None when none did
    value: bool | None  # that element's value
    age_limit: int
    issuer_country: str | None  # the trust anchor's country
    trust_source: str  # where the operator took the anchor from
    outcome: str  # "over" | "under" | "inconclusive"
