"""The calibrated face-age policy in force: read once from its versioned file, resolved per tenant and limit.

The file (`age_policy.json` beside this module, or the `AGE_POLICY_FILE` setting) is written by
`manage.py calibrate_age_policy` from labelled faces and committed with the code. For every age
limit 10..21 it holds the threshold an estimated age must reach (or none: the face path is off and
the flow goes straight to the document step) and the error model behind `ageConfidence`, the
probability that a person whose face reads `estimated_age` is at least the age limit:

    ageConfidence = 1 / (1 + exp(-(intercept + slope * estimated_age)))     (per limit)

A tenant can only add to the policy: extra years over the threshold, a minimum confidence at least
the policy's floor (tenants.models), so no setting can let a face through that the policy would not.
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from checks.results import AgeReading

AGE_LIMITS = range(10, 22)
DEFAULT_POLICY_FILE = Path(__file__).with_name("age_policy.json")
FORMAT = "ageverify-age-policy/1"


@dataclass(frozen=True)
class LimitPolicy:
    age_limit: int
    threshold: float | None  # None: the face path is off for this limit
    confidence_intercept: float
    confidence_slope: float
    # The second opinion (checks.age_heads) must reach this too; None: no veto at this limit.
    second_opinion_threshold: float | None = None

    def confidence(self, estimated_age: float) -> float:
        z = self.confidence_intercept + self.confidence_slope * float(estimated_age)
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


@dataclass(frozen=True)
class AgePolicy:
    version: str
    network: str
    limits: dict[int, LimitPolicy]
    source: Path
    document: dict  # the whole file, for the operators' page and the published statement

    def for_limit(self, age_limit: int) -> LimitPolicy:
        return self.limits[age_limit]


@dataclass(frozen=True)
class FaceRule:
    """What a face must show for one session: the calibrated threshold, made stricter by its tenant."""

    age_limit: int
    threshold: float | None  # None: the face path is off, a document is always asked for
    min_confidence: float
    calibrated: LimitPolicy
    second_opinion_threshold: float | None = None

    @property
    def face_path_on(self) -> bool:
        return self.threshold is not None

    def confidence(self, reading: AgeReading) -> float:
        return self.calibrated.confidence(reading.estimated_age)

    def passes(self, reading: AgeReading) -> bool:
        """Bounds inclusive: exactly the threshold at exactly the minimum confidence passes.

        Two estimates of the capture must reach the threshold: its most frontal frame's, the one photo the
        statement measures, so the capture approves no face that photo would not; and the median of its
        frontal frames (the lower middle one for an even count), so most of its frames do and no one frame
        decides. A one-frame capture is read exactly as the statement measures a photo (docs/age-assurance.md;
        bench/frame_aggregate.py measures captures of three). The second opinion must reach its own
        threshold: it can veto, never approve on its own.
        """
        vetoed = (
            self.second_opinion_threshold is not None
            and reading.second_opinion is not None
            and reading.second_opinion < self.second_opinion_threshold
        )
        frontal = reading.estimated_age if reading.frontal_estimate is None else reading.frontal_estimate
        return (
            self.threshold is not None
            and reading.estimated_age >= self.threshold
            and frontal >= self.threshold
            and not vetoed
            and self.confidence(reading) >= self.min_confidence
        )


def capture_rule_lines() -> list[str]:
    """What the published statement (docs/age-assurance.md) says about reading a capture's frames where the
    evaluation reads one photo per face: kept with the rule it describes (FaceRule.passes)."""
    return [
        "### One photo measured, a capture's frames decided",
        "",
        "The tables measure one photo per face. The flow reads up to three frontal frames of the head-turn capture, "
        "most frontal first, and approves when two of its estimates reach the threshold: the most frontal "
        "frame's, the one photo, and the median of the frames (of two frames, the lower one), so most of the "
        "frames reach it too. A capture of one frame is decided exactly as a photo is measured here, through the "
        "same functions (`checks.age.estimate_age`, then `FaceRule.passes`).",
        "",
        "Why a capture lets no more minors through than one photo: every capture it approves, its most frontal "
        "frame alone would approve, so its approvals are a part of the one-photo rule's on that frame, by "
        "construction. The median alone would not have that property: write q for the chance that one frame of a "
        "minor's capture reads at or over the threshold; the median of three approves with chance 3q² − 2q³, "
        "less than q when q < 1/2 (most minors) but up to 9.6 points more when q > 1/2 (at q ≈ 0.79). "
        "`bench/frame_aggregate.py` measures one frame, the minimum (every frame over the threshold, the rule "
        "until issue 43) and the median on the held-out half, each face made into a capture of three frontal "
        "frames (docs/benchmarks.md keeps its output). The rule in force approves a subset of both the one-frame "
        "and the median approvals, and a superset of the minimum's: its share of adults sent to a document lies "
        "between the one-frame and the minimum columns.",
        "",
        "The minimum was stricter than what is published, and adults paid for it: a face read 32.7 against 31.0 "
        "went to a document because one frame read under 31. Now one frame other than the most frontal may read "
        "under the threshold when the others do not.",
    ]


class PolicyInvalid(ImproperlyConfigured):
    """The policy file is missing or malformed: the service does not start without a valid one."""


def policy_load(path: Path | str) -> AgePolicy:
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PolicyInvalid(f"cannot read the age policy {path}: {error}") from None
    try:
        if document["format"] != FORMAT:
            raise PolicyInvalid(f"{path} is not an {FORMAT} file")
        limits = {}
        for age_limit in AGE_LIMITS:
            entry = document["limits"][str(age_limit)]
            threshold = entry["threshold"]
            veto = entry.get("second_opinion_threshold")
            limits[age_limit] = LimitPolicy(
                age_limit=age_limit,
                threshold=None if threshold is None else float(threshold),
                confidence_intercept=float(entry["confidence"]["intercept"]),
                confidence_slope=float(entry["confidence"]["slope"]),
                second_opinion_threshold=None if veto is None or threshold is None else float(veto),
            )
        policy = AgePolicy(
            version=str(document["version"]),
            network=str(document["network"]["name"]),
            limits=limits,
            source=path,
            document=document,
        )
    except (KeyError, TypeError, ValueError) as error:
        raise PolicyInvalid(f"the age policy {path} is malformed ({error!r}); rewrite it with calibrate_age_policy")
    for limit in limits.values():
        if limit.threshold is not None and not (limit.age_limit <= limit.threshold <= 130):
            raise PolicyInvalid(f"the age policy {path}: threshold {limit.threshold} for limit {limit.age_limit}")
        if limit.confidence_slope < 0:
            raise PolicyInvalid(f"the age policy {path}: confidence must not fall as the estimate rises")
    return policy


_policy: AgePolicy | None = None
_policy_lock = threading.Lock()


def policy_file() -> Path:
    return Path(getattr(settings, "AGE_POLICY_FILE", None) or DEFAULT_POLICY_FILE)


def readers_file() -> Path:
    from checks.age_heads import HEADS_PATH

    return Path(getattr(settings, "AGE_READERS_FILE", None) or HEADS_PATH)


def age_policy() -> AgePolicy:
    """The policy in force, read from its file on first use (the app reads it at start-up), with its readers.

    The readers (AGE_READERS_FILE) are put in use with it, and only if their sha256 is the one the policy was
    calibrated for: thresholds measured on other readers say nothing about these, so the service refuses them."""
    global _policy
    path, readers = policy_file(), readers_file()
    if _policy is None or _policy.source != path or _policy_readers != readers:
        with _policy_lock:
            if _policy is None or _policy.source != path or _policy_readers != readers:
                _policy_install(policy_load(path), readers)
    return _policy


_policy_readers: Path | None = None


def _policy_install(policy: AgePolicy, readers: Path) -> None:
    global _policy, _policy_readers
    from checks.age_heads import ReadersMismatch, heads_use

    expected = policy.document.get("data", {}).get("readers_sha256")
    if not isinstance(expected, str):
        raise PolicyInvalid(f"the age policy {policy.source} does not say which readers it was calibrated for")
    try:
        heads_use(readers, sha256=expected)
    except ReadersMismatch as mismatch:
        raise PolicyInvalid(
            f"the age policy {policy.source} ({policy.version}) was calibrated for other readers: {mismatch}; "
            "point AGE_READERS_FILE at the readers calibrate_age_policy wrote with it, or recalibrate"
        ) from None
    except (OSError, ValueError, KeyError) as error:
        raise PolicyInvalid(f"cannot read the age readers {readers}: {error!r}") from None
    _policy, _policy_readers = policy, readers


def policy_forget() -> None:
    """Read the policy and its readers again at next use (after calibrate_age_policy rewrote them in place)."""
    global _policy, _policy_readers
    with _policy_lock:
        _policy, _policy_readers = None, None


def face_rule(*, age_limit: int, extra_years: int = 0, min_confidence: float | None = None) -> FaceRule:
    """The rule for one age limit under a tenant's settings; the settings can only make it stricter."""
    from tenants.models import AGE_CONFIDENCE_FLOOR

    if extra_years < 0 or (min_confidence is not None and min_confidence < AGE_CONFIDENCE_FLOOR):
        raise ValueError("tenant settings may make the age policy stricter, never looser")
    calibrated = age_policy().for_limit(age_limit)
    threshold = None if calibrated.threshold is None else calibrated.threshold + extra_years
    veto = calibrated.second_opinion_threshold
    return FaceRule(
        age_limit=age_limit,
        threshold=threshold,
        min_confidence=AGE_CONFIDENCE_FLOOR if min_confidence is None else min_confidence,
        calibrated=calibrated,
        second_opinion_threshold=None if veto is None else veto + extra_years,
    )


def tenant_face_rule(tenant, age_limit: int) -> FaceRule:
    return face_rule(age_limit=age_limit, extra_years=tenant.age_extra_years, min_confidence=tenant.min_age_confidence)


def tenant_default_face_rule(age_limit: int) -> FaceRule:
    """The rule for a tenant on default settings (what evaluate_age measures)."""
    from tenants.models import Tenant

    fields = Tenant._meta
    return face_rule(
        age_limit=age_limit,
        extra_years=fields.get_field("age_extra_years").default,
        min_confidence=fields.get_field("min_age_confidence").default,
    )
