"""Calibration of the face-age policy: two thresholds per limit, chosen on honest predictions with margins.

The rule for age limit L approves a face when the estimate reaches T1 and the second opinion reaches T2
(checks.age_heads; in the live flow, a capture's most frontal frame and its frames' median must). For each
limit the pair is the one that sends the fewest adults aged max(25, L+7)..40 to a document, among the pairs
that hold, on the calibration half:

  * counted: at most NEAR_COUNTED_MAX of the faces aged L-5..L-1 approved (half the 1 % bound: a margin),
    and none of the children aged 6..L-6 (the 0.1 % bound cannot be reached by counting on a few hundred
    faces, so not one may pass);
  * the error model's bound: both readers' estimates given the true age modelled as a bivariate normal
    (kernel-smoothed means, standard deviations and correlation per year of age), its predicted shares at
    thresholds MARGIN_YEARS lower than the pair (a stated margin), their one-sided 95 % bootstrap upper
    bound within 1 % (near) and 0.1 % (children).

The predictions are out-of-fold (assurance.readers): no reader saw the face it reads.
Faces listed in the label audit (label_errors.csv) are left out. A limit is off only when no pair within
MAX_YEARS_OVER_LIMIT holds, and its entry then says how far the best pair is.
`ageConfidence` is a logistic model of P(true age >= L | estimate) per limit, on the same predictions.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from sessions_api.age_policy import AGE_LIMITS, FORMAT

from .evaluation import NEAR_BAND_YEARS, adult_band, child_band, fairness_groups, matched_ages
from .statistics import clopper_pearson_upper

NEAR_MAX_SHARE = 0.01
YOUNGER_MAX_SHARE = 0.001
NEAR_COUNTED_MAX = 0.005
MARGIN_YEARS = 1.0
BOUND_CONFIDENCE = 0.95
BOOTSTRAP_SAMPLES = 200
BOOTSTRAP_SEED = 20261126
BANDWIDTH_YEARS = 2.0
MODEL_MAX_AGE = 100
THRESHOLD_STEP = 0.5
MAX_YEARS_OVER_LIMIT = 30
SECOND_OPINION_RANGE = (-10, 20)  # T2 searched from L-10 to L+20
MIN_CALIBRATION_FACES = 10
MAX_BOOTSTRAP_CHECKS = 150  # pairs whose bootstrap bound is computed, at most, per limit
MIN_BAND_FACES = 50  # calibration faces a near band needs before its tail can be modelled
SPLIT_RULE = "sha256(file name, or FG-NET's person): first byte even -> calibration half, odd -> held-out half"


def split_half(key: str) -> str:
    return "calibration" if hashlib.sha256(key.encode("utf-8")).digest()[0] % 2 == 0 else "held_out"


@dataclass(frozen=True)
class Readings:
    """True ages and both readers' predictions for a set of faces (faces found only)."""

    true_ages: np.ndarray
    estimates: np.ndarray
    opinions: np.ndarray

    def select(self, mask: np.ndarray) -> Readings:
        return Readings(self.true_ages[mask], self.estimates[mask], self.opinions[mask])


# --- error model -------------------------------------------------------------------------------


def _moments(true_ages: np.ndarray, e1: np.ndarray, e2: np.ndarray, weights: np.ndarray | None = None):
    """Kernel-smoothed means, sds and correlation of the two readers for each true age 0..MODEL_MAX_AGE."""
    ages = np.arange(MODEL_MAX_AGE + 1)
    kernel = np.exp(-0.5 * ((ages[:, None] - ages[None, :]) / BANDWIDTH_YEARS) ** 2)
    index = np.minimum(true_ages, MODEL_MAX_AGE)
    w = np.ones_like(e1) if weights is None else weights

    def smooth(values):
        return kernel @ np.bincount(index, weights=w * values, minlength=MODEL_MAX_AGE + 1)

    n = np.maximum(smooth(np.ones_like(e1)), 1e-12)
    m1, m2 = smooth(e1) / n, smooth(e2) / n
    s1 = np.sqrt(np.maximum(smooth(e1**2) / n - m1**2, 0.25))
    s2 = np.sqrt(np.maximum(smooth(e2**2) / n - m2**2, 0.25))
    rho = np.clip((smooth(e1 * e2) / n - m1 * m2) / (s1 * s2), -0.95, 0.95)
    return m1, s1, m2, s2, rho


_QUADRATURE = np.linspace(0.0, 10.0, 161)


def _joint_tail(z1: np.ndarray, z2: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """P(X >= z1, Y >= z2) for standard normals with correlation rho (elementwise), by quadrature over X."""
    x = z1[..., None] + _QUADRATURE
    density = norm.pdf(x)
    inner = norm.cdf((rho[..., None] * x - z2[..., None]) / np.sqrt(1 - rho[..., None] ** 2))
    return np.trapezoid(density * inner, x, axis=-1)


def model_share(moments, band_counts: np.ndarray, t1: float, t2: float | None) -> float:
    """The error model's predicted share of a band (counts per true age) approved at (t1, t2)."""
    m1, s1, m2, s2, rho = moments
    ages = np.nonzero(band_counts)[0]
    if not len(ages):
        return 0.0
    z1 = (t1 - m1[ages]) / s1[ages]
    if t2 is None:
        tails = norm.sf(z1)
    else:
        tails = _joint_tail(z1, (t2 - m2[ages]) / s2[ages], rho[ages])
    return float(tails @ band_counts[ages] / band_counts[ages].sum())


def _counts(true_ages: np.ndarray, low: int, high: int, weights=None) -> np.ndarray:
    counts = np.bincount(np.minimum(true_ages, MODEL_MAX_AGE), weights=weights, minlength=MODEL_MAX_AGE + 1)
    band = np.zeros(MODEL_MAX_AGE + 1)
    if high >= low:
        band[max(low, 0) : high + 1] = counts[max(low, 0) : high + 1]
    return band


def bootstrap_moments(readings: Readings) -> list:
    """(weights, error-model moments) for BOOTSTRAP_SAMPLES resamples of the faces: what choose_rule bounds with."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    n = len(readings.true_ages)
    resamples = []
    for _ in range(BOOTSTRAP_SAMPLES):
        weights = rng.multinomial(n, np.full(n, 1 / n)).astype(float)
        resamples.append((weights, _moments(readings.true_ages, readings.estimates, readings.opinions, weights)))
    return resamples


# --- choosing the pair -------------------------------------------------------------------------


def _approved(readings: Readings, mask: np.ndarray, grid1: np.ndarray, grid2: np.ndarray) -> np.ndarray:
    """How many faces of `mask` each pair (T1 row, T2 column) approves."""
    pass1 = (readings.estimates[mask][:, None] >= grid1[None, :]).astype(float)
    pass2 = (readings.opinions[mask][:, None] >= grid2[None, :]).astype(float)
    return pass1.T @ pass2


def choose_rule(readings: Readings, limit: int, bootstrap_moments: list) -> dict:
    r = readings
    near_low, near_high = limit - NEAR_BAND_YEARS, limit - 1
    child_low, child_high = child_band(limit)
    adult_low, adult_high = adult_band(limit)
    near = (r.true_ages >= near_low) & (r.true_ages <= near_high)
    children = (r.true_ages >= child_low) & (r.true_ages <= child_high)
    adults = (r.true_ages >= adult_low) & (r.true_ages <= adult_high)
    if near.sum() < MIN_BAND_FACES:
        return {
            "threshold": None,
            "second_opinion_threshold": None,
            "why_off": f"only {int(near.sum())} calibration faces aged {near_low}-{near_high} (needs {MIN_BAND_FACES})",
        }
    grid1 = np.arange(limit, limit + MAX_YEARS_OVER_LIMIT + THRESHOLD_STEP / 2, THRESHOLD_STEP)
    low2, high2 = SECOND_OPINION_RANGE
    grid2 = np.arange(limit + low2, limit + high2 + THRESHOLD_STEP / 2, THRESHOLD_STEP)
    near_share = _approved(r, near, grid1, grid2) / max(near.sum(), 1)
    child_count = _approved(r, children, grid1, grid2)
    friction = 1 - _approved(r, adults, grid1, grid2) / max(adults.sum(), 1)
    counted_ok = (near_share <= NEAR_COUNTED_MAX) & (child_count == 0)
    near_band, child_band_counts = (
        _counts(r.true_ages, near_low, near_high),
        _counts(r.true_ages, child_low, child_high),
    )
    # The error model's point estimate first (cheap), then its bootstrap bound on the pairs that pass it,
    # fewest adults to a document first.
    point = _moments(r.true_ages, r.estimates, r.opinions)
    candidates = []
    for i, j in zip(*np.nonzero(counted_ok)):
        low1, low2 = float(grid1[i]) - MARGIN_YEARS, float(grid2[j]) - MARGIN_YEARS
        if model_share(point, near_band, low1, low2) <= NEAR_MAX_SHARE and (
            not child_band_counts.any() or model_share(point, child_band_counts, low1, low2) <= YOUNGER_MAX_SHARE
        ):
            candidates.append((float(friction[i, j]), int(i), int(j)))
    checked = 0
    for _, i, j in sorted(candidates):
        t1, t2 = float(grid1[i]), float(grid2[j])
        m1, m2 = t1 - MARGIN_YEARS, t2 - MARGIN_YEARS
        bounds = []
        for weights, moments in bootstrap_moments:
            nb = _counts(r.true_ages, near_low, near_high, weights)
            cb = _counts(r.true_ages, child_low, child_high, weights)
            bounds.append((model_share(moments, nb, m1, m2), model_share(moments, cb, m1, m2) if cb.any() else 0.0))
        near_upper, child_upper = np.quantile(np.array(bounds), BOUND_CONFIDENCE, axis=0)
        checked += 1
        if near_upper <= NEAR_MAX_SHARE and child_upper <= YOUNGER_MAX_SHARE:
            return {
                "threshold": t1,
                "second_opinion_threshold": t2,
                "model_upper_bound": {"near": float(near_upper), "younger": float(child_upper)},
                "calibration_adults_to_document": float(friction[i, j]),
                "pairs_checked": checked,
            }
        if checked >= MAX_BOOTSTRAP_CHECKS:
            break
    # Off: say how far the best pair is (the counted shares at the highest thresholds searched).
    best_near = float(near_share.min())
    best_children = int(child_count.min())
    return {
        "threshold": None,
        "second_opinion_threshold": None,
        "why_off": (
            f"no pair of thresholds up to {limit + MAX_YEARS_OVER_LIMIT} / {limit + high2} meets the bounds "
            f"(fewest approved on the calibration half: {100 * best_near:.2f} % of {near_low}-{near_high}, "
            f"{best_children} children aged {child_low}-{child_high}; error-model bounds checked for {checked} pairs)"
        ),
        "model_bound_near": model_share(
            _moments(r.true_ages, r.estimates, r.opinions), near_band, grid1[-1], grid2[-1]
        ),
        "children_faces": int(child_band_counts.sum()),
    }


# --- confidence --------------------------------------------------------------------------------


def fit_confidence(true_ages: np.ndarray, estimates: np.ndarray, limit: int) -> tuple[float, float]:
    """Logistic regression of [true age >= limit] on the estimate (Newton steps, a little ridge)."""
    y = (true_ages >= limit).astype(float)
    x = np.column_stack([np.ones_like(estimates), estimates])
    beta = np.zeros(2)
    ridge = np.diag([0.0, 1e-3])
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(x @ beta, -40, 40)))
        gradient = x.T @ (y - p) - ridge @ beta
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + ridge
        step = np.linalg.solve(hessian, gradient)
        beta += step
        if np.abs(step).max() < 1e-9:
            break
    return float(beta[0]), max(float(beta[1]), 0.0)


def calibration_error(true_ages, estimates, limit, intercept, slope, bins: int = 10) -> float:
    """Expected calibration error of ageConfidence: |predicted - observed| averaged over 10 bins."""
    p = 1 / (1 + np.exp(-(intercept + slope * estimates)))
    y = (true_ages >= limit).astype(float)
    which = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        members = which == b
        if members.any():
            total += members.sum() * abs(p[members].mean() - y[members].mean())
    return float(total / len(p)) if len(p) else 0.0


# --- the policy file ---------------------------------------------------------------------------


def _share(count: int, total: int) -> dict:
    return {
        "count": int(count),
        "of": int(total),
        "share": (count / total) if total else None,
        "upper_95": clopper_pearson_upper(int(count), int(total)) if total else None,
    }


def _passes(readings: Readings, t1: float | None, t2: float | None) -> np.ndarray:
    if t1 is None:
        return np.zeros(len(readings.true_ages), dtype=bool)
    passes = readings.estimates >= t1
    if t2 is not None:
        passes &= readings.opinions >= t2
    return passes


def shares_at(readings: Readings, limit: int, t1: float | None, t2: float | None) -> dict:
    a = readings.true_ages
    passes = _passes(readings, t1, t2)
    near = (a >= limit - NEAR_BAND_YEARS) & (a < limit)
    low, high = child_band(limit)
    children = (a >= low) & (a <= high)
    adult_low, adult_high = adult_band(limit)
    adults = (a >= adult_low) & (a <= adult_high)
    first_alone = readings.estimates >= t1 if t1 is not None else passes
    return {
        "near_approved": _share((near & passes).sum(), near.sum()),
        "younger_approved": _share((children & passes).sum(), children.sum()),
        "adults_to_document": _share((adults & ~passes).sum(), adults.sum()),
        # What the estimate alone would have let through: the second opinion's vetoes.
        "vetoed_by_second_opinion": int((first_alone & ~passes).sum()),
    }


def _spread(true_ages: np.ndarray) -> dict:
    from .evaluation import BANDS

    return {
        "min": int(true_ages.min()),
        "median": float(np.median(true_ages)),
        "max": int(true_ages.max()),
        "by_band": {name: int(((true_ages >= low) & (true_ages <= high)).sum()) for name, low, high in BANDS},
    }


def policy_document(
    *,
    calibration: Readings,
    held_out: dict[str, Readings],
    network: str,
    data: dict,
    held_out_ethnicities: dict[str, list[str | None]] | None = None,
    today: datetime.date | None = None,
) -> dict:
    """The policy file: thresholds per limit, confidence models, and the evidence on both halves.

    `calibration` holds the out-of-fold readings of the calibration half (all sets pooled); `held_out`
    the final readers' readings of the held-out half, per set; `held_out_ethnicities` their group labels, in the
    same order (for the fairness table at matched ages only: no threshold reads a label).
    """
    if len(calibration.true_ages) < MIN_CALIBRATION_FACES:
        raise ValueError(f"only {len(calibration.true_ages)} calibration faces with a face found: too few")
    bootstrap = bootstrap_moments(calibration)
    pooled = Readings(
        np.concatenate([r.true_ages for r in held_out.values()]),
        np.concatenate([r.estimates for r in held_out.values()]),
        np.concatenate([r.opinions for r in held_out.values()]),
    )
    labels = held_out_ethnicities or {}
    groups = fairness_groups(
        [name for name, r in held_out.items() for _ in r.true_ages],
        [label for name, r in held_out.items() for label in labels.get(name, [None] * len(r.true_ages))],
    )
    limits = {}
    for limit in AGE_LIMITS:
        rule = choose_rule(calibration, limit, bootstrap)
        intercept, slope = fit_confidence(calibration.true_ages, calibration.estimates, limit)
        t1, t2 = rule["threshold"], rule["second_opinion_threshold"]
        limits[str(limit)] = {
            **rule,
            "confidence": {"intercept": round(intercept, 6), "slope": round(slope, 6)},
            "calibration_half": shares_at(calibration, limit, t1, t2),
            "held_out_half": {
                **shares_at(pooled, limit, t1, t2),
                "by_set": {name: shares_at(r, limit, t1, t2) for name, r in held_out.items()},
                "confidence_calibration_error": calibration_error(
                    pooled.true_ages, pooled.estimates, limit, intercept, slope
                ),
                "matched_ages": matched_ages(pooled.true_ages, ~_passes(pooled, t1, t2), groups, limit),
            },
        }
    body = {
        "network": {"name": network},
        "rule": {
            "approves": (
                "estimate >= threshold and second opinion >= second_opinion_threshold (the estimate: a capture's most "
                "frontal frame and the median of its frontal frames, below)"
            ),
            "near_band": f"true age limit-{NEAR_BAND_YEARS}..limit-1",
            "near_max_share": NEAR_MAX_SHARE,
            "children_band": "true age 6..limit-6",
            "younger_max_share": YOUNGER_MAX_SHARE,
            "adults_band": "true age max(25, limit+7)..40 (the share sent to a document is minimised)",
            "counted": f"calibration half: at most {NEAR_COUNTED_MAX:.1%} of the near band approved, no child",
            "bound": f"one-sided {BOUND_CONFIDENCE:.0%} bootstrap upper bound ({BOOTSTRAP_SAMPLES} resamples, seed "
            f"{BOOTSTRAP_SEED}) of a bivariate normal error model's predicted shares, at thresholds "
            f"{MARGIN_YEARS:g} year lower than the pair",
            "predictions": "five-fold out-of-fold on the calibration half (no reader saw the face it reads)",
            "threshold_step_years": THRESHOLD_STEP,
            "max_years_over_limit": MAX_YEARS_OVER_LIMIT,
            "shares_counted_over": "faces found (a retake approves no one)",
        },
        "data": {**data, "split": SPLIT_RULE, "calibration_age_spread": _spread(calibration.true_ages)},
        "limits": limits,
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:10]
    today = today or datetime.date.today()
    return {"format": FORMAT, "version": f"{today.isoformat()}.{digest}", "created": today.isoformat(), **body}
