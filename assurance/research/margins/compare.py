"""The policy's margin: how much room its bound leaves on faces it never saw, and what more room costs.

    DJANGO_SETTINGS_MODULE=ageverify.settings DEBUG=1 .venv/bin/python -m assurance.research.margins.compare \
        ../shared/data/faces-dev ../shared/data/faces-aaf ../shared/data/faces-pairs --margin 1.0 --margin 1.5

The readers are the ones a calibration trains (five-fold out-of-fold on the calibration half, then all of it),
read from the calibration cache (var/age-inputs.npz). For each margin (`assurance.calibration.MARGIN_YEARS`,
the years the error model's bound is taken below the pair) every limit's pair is chosen as
`calibrate_age_policy` chooses it, and two measures of the faces it never saw are printed:

  nested    the calibration half alone: for each of the readers' five folds, the pair is chosen on the other
            four folds' out-of-fold readings and counted on the fold's own; the five folds' counts added
  held-out  the pair chosen on the whole calibration half, counted on the held-out half (as the statement)
"""

from __future__ import annotations

import argparse

import numpy as np

_DATA: dict = {}  # what the forked processes read (set before they fork)


def run(margin: float) -> list[str]:
    from threadpoolctl import threadpool_limits

    from assurance import calibration
    from assurance.calibration import _passes, bootstrap_moments, choose_rule, shares_at
    from assurance.evaluation import NEAR_BAND_YEARS
    from sessions_api.age_policy import AGE_LIMITS

    calibration.MARGIN_YEARS = margin
    cal, held, folds = _DATA["cal"], _DATA["held"], _DATA["folds"]
    lines = [f"margin {margin:.2f} years below the pair, folds by {_DATA['folds_by']}"]
    totals = {"nested": [0, 0], "held": [0, 0]}
    with threadpool_limits(1):
        whole = bootstrap_moments(cal)
        subsets = [cal.select(folds != k) for k in range(folds.max() + 1)]
        fold_bootstraps = [bootstrap_moments(sub) for sub in subsets]
        for limit in AGE_LIMITS:
            rule = choose_rule(cal, limit, whole)
            t1, t2 = rule["threshold"], rule["second_opinion_threshold"]
            if t1 is None:
                lines.append(f"  limit {limit}: off")
                continue
            nested, of = 0, 0
            for k, (sub, boot) in enumerate(zip(subsets, fold_bootstraps, strict=True)):
                own = cal.select(folds == k)
                chosen = choose_rule(sub, limit, boot)
                near = (own.true_ages >= limit - NEAR_BAND_YEARS) & (own.true_ages < limit)
                nested += int((near & _passes(own, chosen["threshold"], chosen["second_opinion_threshold"])).sum())
                of += int(near.sum())
            shares = shares_at(held, limit, t1, t2)
            near_h, children, adults = (shares[k] for k in ("near_approved", "younger_approved", "adults_to_document"))
            totals["nested"][0] += nested
            totals["nested"][1] += of
            totals["held"][0] += near_h["count"]
            totals["held"][1] += near_h["of"]
            sets = _DATA["held_sets"]
            near_mask = (held.true_ages >= limit - NEAR_BAND_YEARS) & (held.true_ages < limit) & _passes(held, t1, t2)
            by_set = ", ".join(f"{s} {int((near_mask & (sets == s)).sum())}" for s in dict.fromkeys(sets))
            lines.append(
                f"  limit {limit}: {t1:.1f} / {t2:.1f}; near approved nested {nested}/{of} ({100 * nested / of:.2f}%), "
                f"held-out {near_h['count']}/{near_h['of']} ({100 * near_h['share']:.2f}%: {by_set}); "
                f"children held-out {children['count']}/{children['of']}; "
                f"adults to a document held-out {100 * adults['share']:.1f}%"
            )
    for name, (count, of) in totals.items():
        lines.append(f"  every limit, near band approved ({name}): {count}/{of} = {100 * count / of:.2f}%")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+")
    parser.add_argument("--margin", type=float, action="append", default=[])
    parser.add_argument("--cache", default="var/age-inputs.npz")
    parser.add_argument("--jobs", type=int, default=1, help="margins measured at once")
    parser.add_argument(
        "--folds",
        choices=("faces", "people"),
        default="faces",
        help="the readers' five folds: faces at random (as calibrate_age_policy), or by split key (FG-NET's person)",
    )
    args = parser.parse_args(argv)

    import django

    django.setup()
    from pathlib import Path

    from assurance.calibration import Readings, split_half
    from assurance.management.commands.calibrate_age_policy import labelled_sets
    from assurance.processes import forked_map
    from assurance.readers import fold_numbers, out_of_fold, read_all, read_inputs, train_heads

    faces, _ = labelled_sets(args.directories)
    halves = np.array([split_half(face.split_key) for _, face in faces])
    inputs = read_inputs([face for _, face in faces], cache=Path(args.cache), jobs=2)
    found = np.array([i.found for i in inputs])
    ages = np.array([face.true_age for _, face in faces])
    cal = np.nonzero(found & (halves == "calibration"))[0]
    out = np.nonzero(found & (halves == "held_out"))[0]
    cal_inputs, cal_ages = [inputs[i] for i in cal], ages[cal]
    groups = [faces[i][1].split_key for i in cal] if args.folds == "people" else None
    estimates, opinions = out_of_fold(cal_inputs, cal_ages, groups=groups)
    held_estimates, held_opinions = read_all(train_heads(cal_inputs, cal_ages), [inputs[i] for i in out])
    print(f"{len(cal)} calibration faces, {len(out)} held-out faces", flush=True)
    _DATA.update(
        cal=Readings(cal_ages, estimates, opinions),
        held=Readings(ages[out], held_estimates, held_opinions),
        folds=fold_numbers(len(cal), groups),
        folds_by=args.folds,
        held_sets=np.array([faces[i][0] for i in out]),
    )
    for lines in forked_map(run, args.margin or [1.0], args.jobs):
        print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
