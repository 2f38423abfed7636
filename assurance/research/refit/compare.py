"""Refits of the age readers compared on the held-out half, under the policy's own choice of thresholds.

    DJANGO_SETTINGS_MODULE=ageverify.settings DEBUG=1 .venv/bin/python -m assurance.research.refit.compare \
        ../shared/data/faces-dev ../shared/data/faces-aaf ../shared/data/faces-pairs \
        --training-only ../shared/data/faces-aaf-adults --variant adults --variant "adults near x2"

Every variant trains the readers as `manage.py calibrate_age_policy` does (five-fold out-of-fold predictions on
the calibration half, then all of it), with its own training faces and weights, lets
`assurance.calibration.choose_rule` pick each limit's pair on those predictions, and reports the pair on the
held-out half: near-limit teens and children approved, adults to a document, per set, and the faces-aaf minus
faces-dev gap at matched ages. The images are read from the calibration cache (var/age-inputs.npz); a face the
cache lacks is read through the networks first.

Variants (`--variant`, repeatable; words combine):
  none          the three sets only (what the committed readers were trained on)
  adults        the --training-only faces too, each counting as one face
  aged<N>       only the training-only faces aged under N (e.g. aged61: 31-60)
  half          the training-only faces counting half
  near x<K>     faces aged 10-40, where every limit's decision falls, counting K times
  young x<K>    faces aged 20 or under counting K times (against the training-only adults' weight)
"""

from __future__ import annotations

import argparse
import re

import numpy as np


def _weights(variant: str, ages: np.ndarray, extra: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which calibration faces train, their weights) for a variant."""
    keep = ~extra if "none" in variant.split() else np.ones(len(ages), dtype=bool)
    if match := re.search(r"aged(\d+)", variant):
        keep &= ~extra | (ages < int(match.group(1)))
    weights = np.ones(len(ages))
    if "half" in variant.split():
        weights[extra] = 0.5
    if match := re.search(r"near x([\d.]+)", variant):
        weights[(ages >= 10) & (ages <= 40)] *= float(match.group(1))
    if match := re.search(r"young x([\d.]+)", variant):
        weights[ages <= 20] *= float(match.group(1))
    return keep, weights


def run(variant: str, cal_inputs, cal_ages, extra, held) -> list[str]:
    from assurance.calibration import Readings, _passes, bootstrap_moments, choose_rule, shares_at
    from assurance.evaluation import fairness_groups, matched_ages
    from assurance.readers import out_of_fold, read_all, train_heads

    keep, weights = _weights(variant, cal_ages, extra)
    chosen = np.nonzero(keep)[0]
    inputs, ages, w = [cal_inputs[i] for i in chosen], cal_ages[chosen], weights[chosen]
    uniform = bool(np.all(w == 1.0))
    estimates, opinions = out_of_fold(inputs, ages, None if uniform else w)
    trained = train_heads(inputs, ages, None if uniform else w)
    calibration = Readings(ages, estimates, opinions)
    bootstrap = bootstrap_moments(calibration)
    held_ages, held_inputs, held_sets = held
    e, o = read_all(trained, held_inputs)
    pooled = Readings(held_ages, e, o)
    groups = fairness_groups(list(held_sets), [None] * len(held_sets))
    lines = [f"{variant}: {len(chosen)} training faces ({int(extra[chosen].sum())} training-only)"]
    for limit in (13, 16, 18, 21):
        rule = choose_rule(calibration, limit, bootstrap)
        t1, t2 = rule["threshold"], rule["second_opinion_threshold"]
        if t1 is None:
            lines.append(f"  limit {limit}: off ({rule['why_off']})")
            continue
        shares = shares_at(pooled, limit, t1, t2)
        by_set = {s: shares_at(pooled.select(held_sets == s), limit, t1, t2) for s in dict.fromkeys(held_sets)}
        table = matched_ages(held_ages, ~_passes(pooled, t1, t2), groups, limit)["groups"]
        gap = None
        if (
            table.get("faces-aaf", {}).get("at_pooled_ages") is not None
            and table.get("faces-dev", {}).get("at_pooled_ages") is not None
        ):
            gap = 100 * (table["faces-aaf"]["at_pooled_ages"] - table["faces-dev"]["at_pooled_ages"])
        near, children, adults = (shares[k] for k in ("near_approved", "younger_approved", "adults_to_document"))
        sets = ", ".join(f"{s} {100 * v['adults_to_document']['share']:.1f}%" for s, v in by_set.items()
                         if v["adults_to_document"]["of"])  # fmt: skip
        lines.append(
            f"  limit {limit}: {t1:.1f} / {t2:.1f}; held-out near approved {near['count']}/{near['of']} "
            f"({100 * near['share']:.2f}%), children {children['count']}/{children['of']}; adults to a document "
            f"{adults['count']}/{adults['of']} = {100 * adults['share']:.1f}% ({sets}); "
            f"gap at matched ages {'n/a' if gap is None else f'{gap:+.1f}'} pts"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+")
    parser.add_argument("--training-only", dest="training_only", action="append", default=[])
    parser.add_argument("--variant", action="append", default=[])
    parser.add_argument("--cache", default="var/age-inputs.npz")
    parser.add_argument("--jobs", type=int, default=1, help="variants trained at once")
    args = parser.parse_args(argv)

    import django

    django.setup()
    from pathlib import Path

    from assurance.calibration import split_half
    from assurance.management.commands.calibrate_age_policy import labelled_sets
    from assurance.processes import forked_map
    from assurance.readers import read_inputs

    faces, _ = labelled_sets(args.directories)
    extra_faces, _ = labelled_sets(args.training_only)
    halves = np.array([split_half(face.split_key) for _, face in faces] + ["calibration"] * len(extra_faces))
    is_extra = np.array([False] * len(faces) + [True] * len(extra_faces))
    everything = faces + extra_faces
    inputs = read_inputs([face for _, face in everything], cache=Path(args.cache), jobs=2)
    found = np.array([i.found for i in inputs])
    ages = np.array([face.true_age for _, face in everything])
    sets = np.array([name for name, _ in everything])
    cal = np.nonzero(found & (halves == "calibration"))[0]
    out = np.nonzero(found & (halves == "held_out"))[0]
    held = (ages[out], [inputs[i] for i in out], sets[out])
    cal_inputs, cal_ages, extra = [inputs[i] for i in cal], ages[cal], is_extra[cal]
    print(f"{len(cal)} calibration faces ({int(extra.sum())} training-only), {len(out)} held-out faces", flush=True)
    _DATA.update(cal_inputs=cal_inputs, cal_ages=cal_ages, extra=extra, held=held, jobs=args.jobs)
    for lines in forked_map(_run, args.variant or ["none"], args.jobs):
        print("\n".join(lines), flush=True)


_DATA: dict = {}  # what the forked processes read (set before they fork)


def _run(variant: str) -> list[str]:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1 if _DATA["jobs"] > 1 else None):
        return run(variant, _DATA["cal_inputs"], _DATA["cal_ages"], _DATA["extra"], _DATA["held"])


if __name__ == "__main__":
    main()
