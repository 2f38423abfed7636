"""Calibration of the face-age policy from labelled faces: thresholds with an upper confidence bound, an error model.

How a threshold is chosen for age limit L (faces found only; a retake approves no one):
  * The faces are split in two halves by a fixed rule on the file name (see `split_half`): the policy
    is fitted on the calibration half only, and the other half reports how it does on faces it never saw.
  * Error model: for each true age a, the estimate is modelled as Normal(mean(a), sd(a)), both
    kernel-smoothed over neighbouring true ages (Gaussian kernel, BANDWIDTH_YEARS). The sd is the
    plain standard deviation, outliers included, so the model's tails are not made thinner than
    the data's.
  * For a threshold T, the model predicts the share of faces aged L-5..L-1 (near) and under L-5
    (younger) whose estimate reaches T. Those predictions are recomputed on BOOTSTRAP_SAMPLES
    resamples of the calibration faces; their 95th percentile is the upper confidence bound.
  * T is the smallest value on a half-year grid whose bounds are at most 1 % (near) and 0.1 %
    (younger), and whose counted shares on the calibration half are too. No such T within
    MAX_YEARS_OVER_LIMIT of L, or too few calibration faces to fit the band: the face path is off.
Why a model and not only counting: a count-only (Clopper-Pearson) bound cannot go below 1 % with
fewer than 369 faces in the band, nor below 0.1 % with fewer than 3,688, whatever the threshold;
the counts and their exact bounds are still reported beside the model's, on both halves.

`ageConfidence` is a logistic model of P(true age >= L | estimate) per limit, fitted on the
calibration half; the held-out half reports how well calibrated it is (expected calibration error).
It is a probability under the age mix of the calibration data, which the statement says.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from .evaluation import ADULT_MARGIN_YEARS, NEAR_BAND_YEARS
from .labels import LabelledFace
from .policy import AGE_LIMITS, FORMAT
from .statistics import clopper_pearson_upper

NEAR_MAX_SHARE = 0.01
YOUNGER_MAX_SHARE = 0.001
BOUND_CONFIDENCE = 0.95
BOOTSTRAP_SAMPLES = 400
BOOTSTRAP_SEED = 20261122
BANDWIDTH_YEARS = 2.0
MODEL_MAX_AGE = 100  # true ages above are pooled here (few faces, far from any limit)
THRESHOLD_STEP = 0.5
MAX_YEARS_OVER_LIMIT = 30
MIN_BAND_FACES = 50  # calibration faces a near band needs before its tail can be modelled
MIN_CALIBRATION_FACES = 10  # below this, not even an error model can be fitted (limits need MIN_BAND_FACES)
SPLIT_RULE = "sha256(file name): first byte even -> calibration half, odd -> held-out half"


def split_half(name: str) -> str:
    return "calibration" if hashlib.sha256(name.encode("utf-8")).digest()[0] % 2 == 0 else "held_out"


@dataclass(frozen=True)
class Estimate:
    face: LabelledFace
    estimated_age: float | None


def _found(estimates: Sequence[Estimate]) -> tuple[np.ndarray, np.ndarray]:
    found = [e for e in estimates if e.estimated_age is not None]
    return (
        np.array([e.face.true_age for e in found], dtype=int),
        np.array([e.estimated_age for e in found], dtype=float),
    )


# --- error model -------------------------------------------------------------------------------


def _kernel() -> np.ndarray:
    ages = np.arange(MODEL_MAX_AGE + 1)
    return np.exp(-0.5 * ((ages[:, None] - ages[None, :]) / BANDWIDTH_YEARS) ** 2)


def _moments(kernel: np.ndarray, true_ages: np.ndarray, estimates: np.ndarray, weights: np.ndarray | None = None):
    """Kernel-smoothed mean and sd of the estimate for each true age 0..MODEL_MAX_AGE."""
    ages = np.minimum(true_ages, MODEL_MAX_AGE)
    w = np.ones_like(estimates) if weights is None else weights
    size = MODEL_MAX_AGE + 1
    n = kernel @ np.bincount(ages, weights=w, minlength=size)
    s1 = kernel @ np.bincount(ages, weights=w * estimates, minlength=size)
    s2 = kernel @ np.bincount(ages, weights=w * estimates**2, minlength=size)
    mean = s1 / np.maximum(n, 1e-12)
    sd = np.sqrt(np.maximum(s2 / np.maximum(n, 1e-12) - mean**2, 0.25))  # never below half a year
    return mean, sd


def _predicted_share(mean, sd, counts: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Predicted share of faces (counts per true age) whose estimate reaches each threshold."""
    ages = np.nonzero(counts)[0]
    if not len(ages):
        return np.zeros_like(thresholds)
    tail = norm.sf((thresholds[:, None] - mean[ages][None, :]) / sd[ages][None, :])
    return tail @ counts[ages] / counts[ages].sum()


# --- thresholds --------------------------------------------------------------------------------


def _band_counts(ages: np.ndarray, low: int, high: int, weights=None) -> np.ndarray:
    counts = np.bincount(np.minimum(ages, MODEL_MAX_AGE), weights=weights, minlength=MODEL_MAX_AGE + 1)
    band = np.zeros_like(counts, dtype=float)
    band[max(low, 0) : high + 1] = counts[max(low, 0) : high + 1]
    return band


def choose_thresholds(true_ages: np.ndarray, estimates: np.ndarray) -> dict[int, dict]:
    kernel = _kernel()
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    resamples = [
        rng.multinomial(len(estimates), np.full(len(estimates), 1 / len(estimates))) for _ in range(BOOTSTRAP_SAMPLES)
    ]
    fitted = [_moments(kernel, true_ages, estimates, weights.astype(float)) for weights in resamples]
    chosen = {}
    for limit in AGE_LIMITS:
        # Searched to 100 years so the file can say what an off limit would need; chosen within the cap only.
        grid = np.arange(limit, 100 + THRESHOLD_STEP / 2, THRESHOLD_STEP)
        near_low, near_high = limit - NEAR_BAND_YEARS, limit - 1
        near_faces = int(((true_ages >= near_low) & (true_ages <= near_high)).sum())
        near_bounds, younger_bounds = [], []
        for weights, (mean, sd) in zip(resamples, fitted):
            near_bounds.append(_predicted_share(mean, sd, _band_counts(true_ages, near_low, near_high, weights), grid))
            younger_bounds.append(_predicted_share(mean, sd, _band_counts(true_ages, 0, near_low - 1, weights), grid))
        near_upper = np.quantile(np.array(near_bounds), BOUND_CONFIDENCE, axis=0)
        younger_upper = np.quantile(np.array(younger_bounds), BOUND_CONFIDENCE, axis=0)
        near_counted = np.array(
            [((true_ages >= near_low) & (true_ages <= near_high) & (estimates >= t)).sum() for t in grid]
        ) / max(near_faces, 1)
        younger_mask = true_ages < near_low
        younger_counted = np.array([(younger_mask & (estimates >= t)).sum() for t in grid]) / max(younger_mask.sum(), 1)
        model_ok = (near_upper <= NEAR_MAX_SHARE) & (younger_upper <= YOUNGER_MAX_SHARE)
        counted_ok = (near_counted <= NEAR_MAX_SHARE) & (younger_counted <= YOUNGER_MAX_SHARE)
        ok = model_ok & counted_ok & (grid <= limit + MAX_YEARS_OVER_LIMIT)
        needs = {"model_bound": _first(grid, model_ok), "counted_share": _first(grid, counted_ok)}
        if near_faces < MIN_BAND_FACES:
            why = f"only {near_faces} calibration faces aged {near_low}-{near_high} (needs {MIN_BAND_FACES})"
            chosen[limit] = {"threshold": None, "why_off": why, "needs": needs}
        elif not ok.any():
            why = f"no threshold up to {limit + MAX_YEARS_OVER_LIMIT} meets the bounds"
            chosen[limit] = {"threshold": None, "why_off": why, "needs": needs}
        else:
            i = int(np.argmax(ok))
            chosen[limit] = {
                "threshold": float(grid[i]),
                "model_upper_bound": {"near": float(near_upper[i]), "younger": float(younger_upper[i])},
                "needs": needs,
            }
    return chosen


def _first(grid: np.ndarray, ok: np.ndarray) -> float | None:
    """The smallest threshold of the grid where `ok` holds, or None."""
    return float(grid[int(np.argmax(ok))]) if ok.any() else None


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


def _shares_at(true_ages, estimates, limit, threshold) -> dict:
    passes = (estimates >= threshold) if threshold is not None else np.zeros_like(estimates, dtype=bool)
    near = (true_ages >= limit - NEAR_BAND_YEARS) & (true_ages < limit)
    younger = true_ages < limit - NEAR_BAND_YEARS
    adults = true_ages >= limit + ADULT_MARGIN_YEARS
    return {
        "near_approved": _share((near & passes).sum(), near.sum()),
        "younger_approved": _share((younger & passes).sum(), younger.sum()),
        "adults_to_document": _share((adults & ~passes).sum(), adults.sum()),
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
    estimates: Sequence[Estimate], *, network: str, source: str, labels: str, today: datetime.date | None = None
) -> dict:
    """The whole policy file as a dict: thresholds, confidence models, error model and the evidence."""
    halves = {"calibration": [], "held_out": []}
    for e in estimates:
        halves[split_half(e.face.name)].append(e)
    cal_ages, cal_est = _found(halves["calibration"])
    out_ages, out_est = _found(halves["held_out"])
    if len(cal_est) < MIN_CALIBRATION_FACES:
        raise ValueError(f"only {len(cal_est)} calibration faces with a face found: too few to calibrate")
    thresholds = choose_thresholds(cal_ages, cal_est)
    mean, sd = _moments(_kernel(), cal_ages, cal_est)
    limits = {}
    for limit in AGE_LIMITS:
        intercept, slope = fit_confidence(cal_ages, cal_est, limit)
        threshold = thresholds[limit]["threshold"]
        limits[str(limit)] = {
            **thresholds[limit],
            "confidence": {"intercept": round(intercept, 6), "slope": round(slope, 6)},
            "calibration_half": _shares_at(cal_ages, cal_est, limit, threshold),
            "held_out_half": {
                **_shares_at(out_ages, out_est, limit, threshold),
                "confidence_calibration_error": calibration_error(out_ages, out_est, limit, intercept, slope),
                # What the error model's threshold alone would give: the price of the counted bound, or of the cap.
                "at_model_bound_threshold": _shares_at(out_ages, out_est, limit, needs["model_bound"])
                if (needs := thresholds[limit]["needs"])["model_bound"] is not None
                else None,
            },
        }
    body = {
        "network": {"name": network},
        "rule": {
            "near_band": f"true age limit-{NEAR_BAND_YEARS}..limit-1",
            "near_max_share": NEAR_MAX_SHARE,
            "younger_max_share": YOUNGER_MAX_SHARE,
            "bound": f"one-sided {BOUND_CONFIDENCE:.0%} bootstrap upper "
            f"bound ({BOOTSTRAP_SAMPLES} resamples, seed {BOOTSTRAP_SEED}) of the error model's predicted share, "
            "and the counted share on the calibration half",
            "threshold_step_years": THRESHOLD_STEP,
            "max_years_over_limit": MAX_YEARS_OVER_LIMIT,
            "min_band_faces": MIN_BAND_FACES,
            "shares_counted_over": "faces found (a retake approves no one)",
        },
        "data": {
            "source": source,
            "labels": labels,
            "images": len(estimates),
            "faces_found": int(len(cal_est) + len(out_est)),
            "split": SPLIT_RULE,
            "calibration_half": {
                "images": len(halves["calibration"]),
                "faces_found": int(len(cal_est)),
                "age_spread": _spread(cal_ages),
            },
            "held_out_half": {
                "images": len(halves["held_out"]),
                "faces_found": int(len(out_est)),
                "age_spread": _spread(out_ages) if len(out_ages) else None,
            },
        },
        "error_model": {
            "kind": f"estimate | true age ~ Normal(mean(age), sd(age)), Gaussian kernel {BANDWIDTH_YEARS} years",
            "true_age": list(range(MODEL_MAX_AGE + 1)),
            "mean_estimate": [round(float(v), 3) for v in mean],
            "sd": [round(float(v), 3) for v in sd],
        },
        "limits": limits,
    }
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:10]
    today = today or datetime.date.today()
    return {"format": FORMAT, "version": f"{today.isoformat()}.{digest}", "created": today.isoformat(), **body}
