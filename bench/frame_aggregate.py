"""What reading a capture's frontal frames together does to approvals: one frame, their minimum, their median.

Run by hand from the repository root:
    DEBUG=1 nice -n 10 .venv/bin/python bench/frame_aggregate.py [--adults-per-set N] [--frames 3]

The published statement measures one photo per face; the flow holds the most frontal of a capture's frontal frames
and their median to the threshold (checks.age, sessions_api.age_policy). The labelled sets hold one photo
per face, so this makes each face of the held-out half into a capture's frontal frames the way the tests make a live
user's (tests.support.faces: the photo framed as a selfie, the head a few degrees off straight, camera shake and
sensor noise, JPEG), reads them with the production estimate and decides with the policy in force for a tenant on
default settings, four ways: the first (most frontal) frame alone, a one-photo capture as the statement measures it;
every frame over the threshold (the minimum, the rule before issue 43); the median of the frames alone; and the rule
in force, the most frontal frame and the median (FaceRule.passes). It prints, per limit, the minors aged
limit-5..limit-1 and the children 6..limit-6 approved, and the adults aged max(25, limit+7)..40 sent to a document,
with the exact 95 % upper bound of each share.

The frames vary less than two real captures of one face do (no change of light or expression): the spread the
median removes is then the frame-to-frame part only, which is what it is asked to remove.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import time
from pathlib import Path

# This file is bench/frame_aggregate.py: its own folder must not shadow the packages of the repository.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

DATA = ROOT.parent / "shared" / "data"
SETS = ("faces-dev", "faces-aaf")
LIMITS = (13, 16, 18, 21)
CENTRE_YAW_DEGREES = 4.0  # a frontal frame's head pose: within this of straight
RULES = ("one frame", "minimum", "median", "in force")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help=f"the labelled sets' folder (default {DATA})")
    parser.add_argument(
        "--adults-per-set", type=int, default=100, help="adults aged 25-40 sampled per set (default 100; 0: all)"
    )
    parser.add_argument("--frames", type=int, default=3, help="frontal frames per capture (default 3)")
    parser.add_argument(
        "--report-every", type=int, default=0, help="also print the counts so far every N faces (0: at the end only)"
    )
    options = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ageverify.settings")
    import django

    django.setup()

    faces = _held_out_faces(options.data, options.adults_per_set)
    print(
        f"held-out faces aged 8-20, and adults 25-40 sampled: {len(faces)} ({', '.join(SETS)}); "
        f"{options.frames} frames each"
    )
    counts = {(rule, limit, band): [0, 0] for rule in RULES for limit in LIMITS for band in ("near", "child", "adult")}
    # Minors (6..limit-1) the median approves and one frame does not, and the other way round: the same faces.
    only = {(rule, limit): 0 for rule in ("median", "one frame") for limit in LIMITS}
    started, read = time.process_time(), 0
    for face in faces:
        decisions = _decisions(face, options.frames)
        if decisions is None:
            continue
        read += 1
        if options.report_every and read % options.report_every == 0:
            print(f"\n--- after {read} faces ({time.process_time() - started:.0f} s of CPU)")
            _report(counts, only)
            sys.stdout.flush()
        for limit in LIMITS:
            band = _band(face.true_age, limit)
            if band is None:
                continue
            if band != "adult" and decisions["median"][limit] != decisions["one frame"][limit]:
                only["median" if decisions["median"][limit] else "one frame", limit] += 1
            for rule in RULES:
                approved = decisions[rule][limit]
                counts[rule, limit, band][0] += (not approved) if band == "adult" else approved
                counts[rule, limit, band][1] += 1
    print(f"faces read: {read} ({time.process_time() - started:.0f} s of CPU)")
    _report(counts, only)


def _held_out_faces(data: Path, adults_per_set: int) -> list:
    from assurance.calibration import split_half
    from assurance.labels import labelled_folder

    chosen = []
    for name in SETS:
        held_out = [f for f in labelled_folder(data / name).faces if split_half(f.split_key) == "held_out"]
        for low, high in ((8, 20), (25, 40)):
            band = [f for f in held_out if low <= f.true_age <= high]
            if low == 25 and adults_per_set and len(band) > adults_per_set:
                band = random.Random(f"{name}:{low}").sample(band, adults_per_set)
            chosen += band
    random.Random(20261128).shuffle(chosen)  # a run cut short has read a random part of every band
    return chosen


def _band(age: int, limit: int) -> str | None:
    from assurance.evaluation import NEAR_BAND_YEARS, adult_band, child_band

    if limit - NEAR_BAND_YEARS <= age < limit:
        return "near"
    child_low, child_high = child_band(limit)
    if child_low <= age <= child_high:
        return "child"
    adult_low, adult_high = adult_band(limit)
    return "adult" if adult_low <= age <= adult_high else None


def _decisions(face, count: int) -> dict[str, dict[int, bool]] | None:
    """Per rule and limit, whether the face's capture is approved; None when no frame shows the face."""
    from checks.age import estimate_age
    from checks.results import AgeReading
    from sessions_api.age_policy import tenant_default_face_rule
    from tests.support.faces import add_noise, encode, photo_portrait, turn_head

    try:
        portrait, geometry = photo_portrait(face.path)
    except (AttributeError, TypeError):  # the engine finds no face in the photo
        return None
    rng = random.Random(face.name)
    frames = []
    for _ in range(count):
        yaw = rng.uniform(-CENTRE_YAW_DEGREES, CENTRE_YAW_DEGREES)
        frame = turn_head(portrait, geometry, yaw, shift=(rng.uniform(-3, 3), rng.uniform(-3, 3)))
        frames.append(encode(add_noise(frame, rng.randrange(1 << 30))))
    capture, first = estimate_age(frames), estimate_age(frames[:1])
    if not isinstance(capture, AgeReading) or not isinstance(first, AgeReading):
        return None
    decisions = {rule: {} for rule in RULES}
    for limit in LIMITS:
        rule = tenant_default_face_rule(limit)
        decisions["one frame"][limit] = rule.passes(first)
        median = dataclasses.replace(capture, frontal_estimate=None)  # the median alone
        decisions["median"][limit] = rule.passes(median)
        decisions["minimum"][limit] = rule.passes(median) and capture.lowest_estimate >= rule.threshold
        decisions["in force"][limit] = rule.passes(capture)  # the most frontal frame and the median
    return decisions


def _report(counts: dict, only: dict) -> None:
    from assurance.evaluation import Share

    for limit in LIMITS:
        print(f"\nage limit {limit}")
        for band, what in (("near", "minors limit-5..limit-1 approved"), ("child", "children 6..limit-6 approved"),
                           ("adult", "adults max(25, limit+7)..40 to a document")):  # fmt: skip
            print(f"  {what}")
            for rule in RULES:
                count, total = counts[rule, limit, band]
                print(f"    {rule:<10} {Share(count, total)}")
        print(
            f"  minors approved by the median and not by one frame: {only['median', limit]}; "
            f"by one frame and not by the median: {only['one frame', limit]}"
        )


if __name__ == "__main__":
    main()
