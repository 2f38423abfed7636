"""Would a reader trained on the decision itself (is this face at least the limit?) beat the age reader's threshold?

    .venv/bin/python -m assurance.research.decision_reader.compare /work/shared/data/faces-{dev,aaf,pairs} \
        --save /work/research-cache/decision.npz
    .venv/bin/python -m assurance.research.decision_reader.compare --scores /work/research-cache/decision.npz

The estimate reader (assurance.readers) regresses log(1 + age) on what it reads, and the
policy approves above a threshold of that age. A face's age matters to a limit's decision only near the
limit; this compares the age reader with a classifier per limit (P(age >= limit), built as the age reader is:
SEEDS one-hidden-layer networks, the same inputs ESTIMATE_READS, the same L2) on:

* the calibration half, five-fold out-of-fold with the readers' own folds;
* the held-out half, read by both trained on the whole calibration half, with each cut chosen on the
  calibration half's out-of-fold scores (as the policy chooses its thresholds).

A cut is the lowest that approves at most 1 % of the calibration faces aged limit-5..limit-1 (counted; no error
model and no margin, so the shares are lower than the policy's: the comparison is between scorers). Printed
per limit 13, 16, 18 and 21: the adults max(25, limit+7)..40 sent to a document, pooled and by set, the near
band and the children 6..limit-6 approved, and 95 % bootstrap intervals of each scorer's change against the age
reader in adults sent to a document and in the faces-aaf minus faces-dev gap. A cut chosen on one half moves
on the other (the held-out near band gets more or fewer than 1 %), so each scorer is also cut on the held-out
half itself at RANKING_SHARE of its near band: that compares how well they rank, not a rule.

Needs both halves' inputs in var/age-inputs.npz (assurance.research.decision_reader.fill, or calibrate_age_policy).
"""

from __future__ import annotations

import argparse

import numpy as np

from assurance.evaluation import NEAR_BAND_YEARS, adult_band, child_band
from assurance.readers import (
    ESTIMATE_READS,
    FOLD_SEED,
    FOLDS,
    HIDDEN,
    L2,
    SEEDS,
    out_of_fold,
    read_all,
    read_inputs,
    reader_inputs,
    train_heads,
)
from assurance.research.faceres_finetune.extract import half_faces

from .fill import CACHE

LIMITS = (13, 16, 18, 21)
NEAR_SHARE = 0.01
BOOTSTRAP = 500
SEED = 20261127
SETS = ("faces-dev", "faces-aaf")
MIX_WEIGHTS = (0.5, 0.25)
RANKING_SHARE = 0.03  # a near-band share wide enough to compare rankings on a few hundred faces


def bands(limit: int, ages: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which faces are near the limit, children and adults, by the statement's own bands."""
    (child_low, child_high), (adult_low, adult_high) = child_band(limit), adult_band(limit)
    return (
        (ages >= limit - NEAR_BAND_YEARS) & (ages < limit),
        (ages >= child_low) & (ages <= child_high),
        (ages >= adult_low) & (ages <= adult_high),
    )


def cut_for(scores: np.ndarray, ages: np.ndarray, limit: int, share: float = NEAR_SHARE) -> float:
    """The lowest cut approving at most `share` of the near band (approve: score >= cut)."""
    values = np.sort(scores[bands(limit, ages)[0]])[::-1]
    return float(np.nextafter(values[int(np.floor(share * len(values)))], np.inf))


def _classifiers(z: np.ndarray, ages: np.ndarray, limit: int):
    from sklearn.neural_network import MLPClassifier

    mean, scale = z.mean(axis=0), z.std(axis=0) + 1e-6
    target = (ages >= limit).astype(int)
    networks = [
        MLPClassifier(hidden_layer_sizes=(HIDDEN,), alpha=L2, max_iter=500, early_stopping=True, random_state=seed).fit(
            (z - mean) / scale, target
        )
        for seed in range(SEEDS)
    ]

    def logit(rows: np.ndarray) -> np.ndarray:
        p = np.mean([n.predict_proba((rows - mean) / scale)[:, 1] for n in networks], axis=0)
        p = np.clip(p, 1e-9, 1 - 1e-9)
        return np.log(p / (1 - p))

    return logit


def score(directories: list[str]) -> dict[str, np.ndarray]:
    halves = {}
    for half in ("calibration", "held_out"):
        named = half_faces(directories, half)
        inputs = read_inputs([face for _, face in named], cache=CACHE)
        kept = [i for i, entry in enumerate(inputs) if entry.found]
        halves[half] = (
            [inputs[i] for i in kept],
            np.array([named[i][1].true_age for i in kept]),
            np.array([named[i][0] for i in kept]),
        )
    inputs, ages, sets = halves["calibration"]
    held_inputs, held_ages, held_sets = halves["held_out"]
    saved = {"ages": ages, "sets": sets, "held_ages": held_ages, "held_sets": held_sets}
    saved["estimate"], saved["opinion"] = out_of_fold(inputs, ages)
    saved["held_estimate"], saved["held_opinion"] = read_all(train_heads(inputs, ages), held_inputs)
    z = np.hstack([reader_inputs(inputs)[name] for name in ESTIMATE_READS])
    held_z = np.hstack([reader_inputs(held_inputs)[name] for name in ESTIMATE_READS])
    folds = np.random.default_rng(FOLD_SEED).permutation(len(inputs)) % FOLDS
    for limit in LIMITS:
        oof = np.zeros(len(ages))
        for fold in range(FOLDS):
            oof[folds == fold] = _classifiers(z[folds != fold], ages[folds != fold], limit)(z[folds == fold])
        saved[f"classifier_{limit}"] = oof
        saved[f"held_classifier_{limit}"] = _classifiers(z, ages, limit)(held_z)
    return saved


def _shares(s: np.ndarray, ages: np.ndarray, sets: np.ndarray, limit: int, cut: float) -> dict:
    near, children, adults = bands(limit, ages)
    shares = {name: float((s[adults & (sets == name)] < cut).mean()) for name in SETS}
    return {
        "adults": float((s[adults] < cut).mean()),
        **shares,
        "gap": shares["faces-aaf"] - shares["faces-dev"],
        "near": (int((s[near] >= cut).sum()), int(near.sum())),
        "children": (int((s[children] >= cut).sum()), int(children.sum())),
    }


def scored(saved: dict[str, np.ndarray], limit: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(calibration scores, held-out scores) per scorer: the two readers, and mixes of their ranks.

    A mix puts both scores on the calibration half's out-of-fold ranks (each one's empirical distribution
    there) and weighs them; `mix 0.25` gives the age reader a quarter."""
    estimate, classifier = saved["estimate"], saved[f"classifier_{limit}"]
    held_estimate, held_classifier = saved["held_estimate"], saved[f"held_classifier_{limit}"]

    def rank(reference: np.ndarray, values: np.ndarray) -> np.ndarray:
        return np.searchsorted(np.sort(reference), values, side="right") / len(reference)

    scorers = {"age reader": (estimate, held_estimate), "classifier": (classifier, held_classifier)}
    for weight in MIX_WEIGHTS:
        scorers[f"mix {weight:g}"] = tuple(
            weight * rank(estimate, e) + (1 - weight) * rank(classifier, c)
            for e, c in ((estimate, classifier), (held_estimate, held_classifier))
        )
    return scorers


def report(saved: dict[str, np.ndarray]) -> None:
    ages, sets, held_ages, held_sets = saved["ages"], saved["sets"], saved["held_ages"], saved["held_sets"]
    print(f"{len(ages)} calibration faces, {len(held_ages)} held-out faces found")
    rng = np.random.default_rng(SEED)
    for limit in LIMITS:
        print(f"limit {limit}:")
        scorers = scored(saved, limit)
        cuts = {name: cut_for(calibration, ages, limit) for name, (calibration, _) in scorers.items()}
        for name, (calibration, held) in scorers.items():
            for half, s, a, g in (
                ("calibration (out-of-fold)", calibration, ages, sets),
                ("held-out", held, held_ages, held_sets),
            ):
                r = _shares(s, a, g, limit, cuts[name])
                print(
                    f"  {name}, {half}: adults to a document {r['adults']:.1%} (faces-dev {r['faces-dev']:.1%}, "
                    f"faces-aaf {r['faces-aaf']:.1%}, gap {100 * r['gap']:+.1f}); near approved "
                    f"{r['near'][0]}/{r['near'][1]}, children {r['children'][0]}/{r['children'][1]}"
                )
        # Ranking alone: each scorer's own cut on the held-out half approving RANKING_SHARE of its near band.
        for name, (_, held) in scorers.items():
            r = _shares(held, held_ages, held_sets, limit, cut_for(held, held_ages, limit, RANKING_SHARE))
            print(
                f"  {name}, held-out, cut there at {RANKING_SHARE:.0%} of the near band (ranking only): adults to a "
                f"document {r['adults']:.1%} (gap {100 * r['gap']:+.1f}); near approved {r['near'][0]}/{r['near'][1]}"
                f", children {r['children'][0]}/{r['children'][1]}"
            )
        # The held-out change against the age reader, resampling the held-out faces (the cuts stay as chosen
        # on the calibration half).
        changes = {name: [] for name in scorers if name != "age reader"}
        for _ in range(BOOTSTRAP):
            pick = rng.integers(0, len(held_ages), len(held_ages))
            a, g = held_ages[pick], held_sets[pick]
            shares = {name: _shares(held[pick], a, g, limit, cuts[name]) for name, (_, held) in scorers.items()}
            for name, found in changes.items():
                found.append(
                    (
                        shares[name]["adults"] - shares["age reader"]["adults"],
                        shares[name]["gap"] - shares["age reader"]["gap"],
                    )
                )
        for name, found in changes.items():
            (adult_low, gap_low), (adult_high, gap_high) = np.quantile(np.array(found), [0.025, 0.975], axis=0)
            print(
                f"  held-out, {name} minus age reader (95 % bootstrap): adults to a document "
                f"{100 * adult_low:+.1f} to {100 * adult_high:+.1f} points, faces-aaf minus faces-dev gap "
                f"{100 * gap_low:+.1f} to {100 * gap_high:+.1f} points",
                flush=True,
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="*")
    parser.add_argument("--save", help="keep the scores here (outside the repository)")
    parser.add_argument("--scores", help="report on scores kept by an earlier --save")
    args = parser.parse_args(argv)
    if args.scores:
        saved = dict(np.load(args.scores))
    else:
        if not args.directories:
            parser.error("give the labelled folders, or --scores")
        saved = score(args.directories)
        if args.save:
            np.savez(args.save, **saved)
    report(saved)


if __name__ == "__main__":
    main()
