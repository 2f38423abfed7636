"""The held-out faces under a limit that the policy and readers in force approve, with both readings.

    DJANGO_SETTINGS_MODULE=ageverify.settings DEBUG=1 .venv/bin/python -m assurance.research.margins.approved_minors \
        ../shared/data/faces-dev ../shared/data/faces-aaf ../shared/data/faces-pairs

Reads the networks' outputs from the calibration cache (var/age-inputs.npz), the readers from
`checks.age_heads` and the pairs from the policy file in force: what the statement counts as "approved".
"""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+")
    parser.add_argument("--cache", default="var/age-inputs.npz")
    args = parser.parse_args(argv)

    import django

    django.setup()
    from pathlib import Path

    from assurance.calibration import split_half
    from assurance.evaluation import NEAR_BAND_YEARS
    from assurance.management.commands.calibrate_age_policy import labelled_sets
    from assurance.readers import read_all, read_inputs
    from checks.age_heads import age_heads
    from sessions_api.age_policy import age_policy

    faces = labelled_sets(args.directories)[0]
    faces = [(name, face) for name, face in faces if split_half(face.split_key) == "held_out"]
    inputs = read_inputs([face for _, face in faces], cache=Path(args.cache), jobs=1)
    found = [(faces[i], inputs[i]) for i in range(len(faces)) if inputs[i].found]
    estimates, opinions = read_all(age_heads(), [face_inputs for _, face_inputs in found])
    policy = age_policy()
    for limit, rule in sorted(policy.limits.items()):
        if rule.threshold is None:
            continue
        for ((name, face), _), estimate, opinion in zip(found, estimates, opinions, strict=True):
            vetoed = rule.second_opinion_threshold is not None and opinion < rule.second_opinion_threshold
            if face.true_age < limit and estimate >= rule.threshold and not vetoed:
                band = "near" if face.true_age >= limit - NEAR_BAND_YEARS else "child"
                read = f"read {estimate:.1f} / {opinion:.1f}"
                print(f"limit {limit}: {name} {face.name} aged {face.true_age} ({band}) {read}")


if __name__ == "__main__":
    main()
