"""The policy calibrate_age_policy would choose with a mixed score in the estimate's place, on the held-out half.

    .venv/bin/python -m assurance.research.decision_reader.policy --scores /work/research-cache/decision.npz

`compare` ranks the scorers with plain counted cuts; this runs the policy's own choice
(assurance.calibration.choose_rule: counted shares with a margin, the bivariate normal error
model at thresholds a year lower, its bootstrap bound) on the calibration half's out-of-fold scores, with the
second opinion (dlib's descriptor reader) as today, and reports the chosen pair on the held-out half.

A mix (assurance.research.decision_reader.compare.scored) is a weighted average of the age reader's and the limit's
classifier's ranks; it is put back in years through the age reader's own distribution on the calibration half
(the age at the same rank), so that the error model and its one-year margin mean what they mean for the age
reader. The age reader through this path reproduces the policy in force on these faces.
"""

from __future__ import annotations

import argparse

import numpy as np

from assurance.calibration import Readings, bootstrap_moments, choose_rule, shares_at

from .compare import LIMITS, SETS, scored


def _in_years(ranks: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    return np.quantile(estimate, np.clip(ranks, 0.0, 1.0))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scores", required=True, help="compare's --save file")
    args = parser.parse_args(argv)
    saved = dict(np.load(args.scores))
    ages, held_ages, held_sets = saved["ages"], saved["held_ages"], saved["held_sets"]
    estimate = saved["estimate"]
    for limit in LIMITS:
        print(f"limit {limit}:", flush=True)
        for name, (calibration, held) in scored(saved, limit).items():
            if name != "age reader":
                calibration, held = _in_years(calibration, estimate), _in_years(held, estimate)
            readings = Readings(ages, calibration, saved["opinion"])
            rule = choose_rule(readings, limit, bootstrap_moments(readings))
            t1, t2 = rule["threshold"], rule["second_opinion_threshold"]
            if t1 is None:
                print(f"  {name}: off ({rule['why_off']})")
                continue
            held_readings = Readings(held_ages, held, saved["held_opinion"])
            pooled = shares_at(held_readings, limit, t1, t2)
            by_set = {s: shares_at(held_readings.select(held_sets == s), limit, t1, t2) for s in SETS}
            documents = {s: by_set[s]["adults_to_document"]["share"] for s in SETS}
            near, children, adults = (pooled[k] for k in ("near_approved", "younger_approved", "adults_to_document"))
            print(
                f"  {name}: thresholds {t1:.1f} / {t2:.1f}; held-out adults to a document {adults['count']}/"
                f"{adults['of']} = {adults['share']:.1%} (faces-dev {documents['faces-dev']:.1%}, faces-aaf "
                f"{documents['faces-aaf']:.1%}, gap {100 * (documents['faces-aaf'] - documents['faces-dev']):+.1f}); "
                f"near approved {near['count']}/{near['of']}, children {children['count']}/{children['of']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
