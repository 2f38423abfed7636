"""Confidence bounds for shares measured on a finite sample of faces."""

from __future__ import annotations

from scipy.stats import beta

CONFIDENCE = 0.95


def clopper_pearson_upper(count: int, total: int, *, confidence: float = CONFIDENCE) -> float:
    """Upper end of the two-sided Clopper-Pearson interval for `count` successes out of `total`.

    Exact (never below the true coverage). With no success at all it is 1 - (alpha/2)^(1/total):
    369 faces with no approval are needed before it reaches 1 %, 3,688 before 0.1 %.
    """
    if total <= 0 or not 0 <= count <= total:
        raise ValueError("need 0 <= count <= total and total > 0")
    if count == total:
        return 1.0
    return float(beta.ppf(1 - (1 - confidence) / 2, count + 1, total - count))


def clopper_pearson_interval(count: int, total: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The two-sided exact (Clopper-Pearson) interval for `count` successes out of `total`."""
    upper = clopper_pearson_upper(count, total, confidence=confidence)
    lower = 0.0 if count == 0 else float(beta.ppf((1 - confidence) / 2, count, total - count + 1))
    return lower, upper
