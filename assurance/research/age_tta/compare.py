"""Does averaging an age over several crops of the same face make the face path approve more adults?

    .venv/bin/python -m assurance.research.age_tta.compare --readings /work/research-cache/age-tta.npz

Reads assurance.research.age_tta.read's cache (calibration half only) and compares production's one crop with the
average over crops, network by network and for the two combined:

* each network's mean absolute error, and its signed error on adults aged 25-40 by set;
* the two networks combined by a linear fit of the true age, five-fold cross-fitted (folds by face, FG-NET by
  person), and at limits 13, 16, 18 and 21 the lowest threshold that approves at most NEAR_SHARE of the faces
  aged limit-5..limit-1: the children 6..limit-6 it approves and the adults max(25, limit+7)..40 it sends to a
  document, pooled and by set;
* a paired bootstrap of the change in adults sent to a document at limit 18 (the threshold chosen again in
  every resample).

This is a proxy for the service's readers (which also read face-api's features and dlib's descriptor): it
says whether the crops are worth carrying into them, not what the policy would become.
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np

from assurance.research.decision_reader.compare import bands

NEAR_SHARE = 0.01
LIMITS = (13, 16, 18, 21)
FOLDS = 5
BOOTSTRAP = 200
SEED = 20261127
STEP = 0.5


def folds(split_keys: np.ndarray) -> np.ndarray:
    return np.array([hashlib.sha256(f"fold:{key}".encode()).digest()[0] % FOLDS for key in split_keys])


def cross_fitted(columns: list[np.ndarray], ages: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """Out-of-fold predictions of a least-squares line of the true age on the columns."""
    x = np.column_stack([np.ones_like(ages, dtype=float), *columns])
    out = np.empty(len(ages))
    for k in range(FOLDS):
        test = fold == k
        beta, *_ = np.linalg.lstsq(x[~test], ages[~test], rcond=None)
        out[test] = x[test] @ beta
    return out


def threshold_for(estimates: np.ndarray, near: np.ndarray) -> float:
    """The lowest threshold on a half-year grid approving at most NEAR_SHARE of the near band."""
    values = np.sort(estimates[near])[::-1]
    allowed = int(np.floor(NEAR_SHARE * len(values)))
    # Approving `allowed` faces at most: the threshold must be above the (allowed+1)-th highest estimate.
    bar = values[allowed] if allowed < len(values) else -np.inf
    return float(np.floor(bar / STEP) * STEP + STEP)


def friction(estimates, ages, limit, weights=None):
    near, children, adults = bands(limit, ages)
    if weights is not None:
        near, children, adults = (np.repeat(mask, weights) for mask in (near, children, adults))
        estimates = np.repeat(estimates, weights)
    t = threshold_for(estimates, near)
    return t, (estimates[children] >= t).sum(), children.sum(), (estimates[adults] < t).mean(), adults


def report(name: str, estimates: np.ndarray, ages: np.ndarray, sets: np.ndarray) -> None:
    print(f"  {name}: MAE {np.abs(estimates - ages).mean():.2f} y")
    for limit in LIMITS:
        t, children_in, children_all, pooled, adults = friction(estimates, ages, limit)
        by_set = ", ".join(
            f"{s} {(estimates[adults & (sets == s)] < t).mean():.1%}" for s in ("faces-dev", "faces-aaf")
        )
        print(
            f"    limit {limit}: threshold {t:.1f}, children approved {children_in}/{children_all}, "
            f"adults to a document {pooled:.1%} ({by_set})"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readings", required=True)
    args = parser.parse_args(argv)
    data = np.load(args.readings)
    face_api, faceres, ages, sets = data["face_api"], data["faceres"], data["ages"].astype(float), data["sets"]
    variants = data["variants"]
    fold = folds(data["split_keys"])
    print(f"{len(ages)} calibration faces, {len(variants)} crops each (variant 0 is production's)")
    adults = (ages >= 25) & (ages <= 40)
    for name, readings in (("face-api", face_api), ("FaceRes", faceres)):
        spread = readings.std(axis=1)
        print(
            f"{name}: spread of a face's age across crops: median {np.median(spread):.2f} y, "
            f"90th percentile {np.quantile(spread, 0.9):.2f} y"
        )
        for label, estimate in (("one crop", readings[:, 0]), ("mean of crops", readings.mean(axis=1))):
            signed = {s: (estimate - ages)[adults & (sets == s)].mean() for s in ("faces-dev", "faces-aaf")}
            print(
                f"  {label}: MAE {np.abs(estimate - ages).mean():.2f} y; adults 25-40 signed error "
                f"faces-dev {signed['faces-dev']:+.2f} y, faces-aaf {signed['faces-aaf']:+.2f} y"
            )
    print("\nBoth networks, a cross-fitted line, the lowest threshold approving at most 1 % of limit-5..limit-1:")
    one = cross_fitted([face_api[:, 0], faceres[:, 0]], ages, fold)
    many = cross_fitted([face_api.mean(axis=1), faceres.mean(axis=1)], ages, fold)
    report("one crop", one, ages, sets)
    report("mean of crops", many, ages, sets)
    rng = np.random.default_rng(SEED)
    differences = []
    for _ in range(BOOTSTRAP):
        weights = rng.multinomial(len(ages), np.full(len(ages), 1 / len(ages)))
        differences.append(friction(many, ages, 18, weights)[3] - friction(one, ages, 18, weights)[3])
    low, high = np.quantile(differences, [0.025, 0.975])
    change = friction(many, ages, 18)[3] - friction(one, ages, 18)[3]
    print(
        f"\nLimit 18, adults sent to a document, mean of crops minus one crop: {100 * change:+.1f} points "
        f"(95 % paired bootstrap {100 * low:+.1f} to {100 * high:+.1f})"
    )


if __name__ == "__main__":
    main()
