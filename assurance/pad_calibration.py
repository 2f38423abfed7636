"""The thresholds of the passive veto and of the colour flash, set from genuine material, never by hand (docs/pad.md).

Both checks refuse a capture whose score falls under a threshold. For a target BPCER the threshold is the
score of the k-th lowest genuine item of a calibration half, k = floor(target x n): at most k of the n are
under it. The other half (a fixed split on the file or capture name) then gives the BPCER that threshold
really has on items it was not chosen on, with its exact 95 % Clopper-Pearson interval; and the threshold
in force in the code is measured on everything.

  * passive (checks.passive): bona fide face photos (the research sets faces-dev, faces-aaf: photos of
    real faces, never of prints or screens), one face each, its real-face probability;
  * flash (checks.flash): genuine captures in the format of docs/pad.md that carry the colours issued
    ("flash") and shown ("shown"), the correlation of their skin with the colours.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .pad_evaluation import GENUINE, capture_dirs, capture_read
from .statistics import clopper_pearson_interval

PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png")


@dataclass(frozen=True)
class Calibration:
    name: str
    scores: dict[str, float]  # item name -> score
    in_force: float
    target: float
    skipped: int  # items without a usable face


def threshold_for(scores: list[float], target: float) -> float:
    """The threshold under which at most floor(target x n) of the genuine scores fall."""
    ordered = sorted(scores)
    return ordered[min(math.floor(target * len(ordered)), len(ordered) - 1)]


def in_calibration_half(name: str) -> bool:
    return hashlib.sha256(name.encode()).digest()[0] % 2 == 0


def photo_paths(directories: Iterable[Path], *, per_directory: int | None) -> list[Path]:
    """The photos of each directory, an even spread of `per_directory` of them when given (sorted by name)."""
    chosen = []
    for directory in directories:
        photos = sorted(p for p in Path(directory).iterdir() if p.suffix.lower() in PHOTO_SUFFIXES)
        if per_directory and len(photos) > per_directory:
            step = len(photos) / per_directory
            photos = [photos[int(i * step)] for i in range(per_directory)]
        chosen += photos
    return chosen


def passive_calibration(paths: list[Path], *, target: float) -> Calibration:
    """The passive models' real-face probability of the dominant face of each bona fide photo."""
    from checks.faces import dominant_face, face_engine
    from checks.images import ImageRejected, open_image
    from checks.passive import PASSIVE_THRESHOLD, passive_models

    scores, skipped = {}, 0
    for path in paths:
        try:
            picture = open_image(path.read_bytes())
        except ImageRejected:
            skipped += 1
            continue
        face, several = dominant_face(face_engine().faces(picture))
        if face is None or several:
            skipped += 1
            continue
        scale = picture.width / face.image_size[0]
        box = tuple(v * scale for v in face.box)
        scores[f"{path.parent.name}/{path.name}"] = passive_models().real_probability(picture, box)
    return Calibration("passive", scores, PASSIVE_THRESHOLD, target, skipped)


def flash_calibration(directory: Path, *, target: float) -> Calibration:
    """The flash score of each genuine capture under `directory` that carries issued and shown colours."""
    from checks.flash import FLASH_MIN_SCORE
    from checks.liveness import capture_flash_score

    scores, skipped = {}, 0
    for path in capture_dirs(directory):
        capture = capture_read(path)
        if capture["type"] != GENUINE:
            continue
        if not capture["flash"]:
            skipped += 1
            continue
        scores[path.name] = capture_flash_score(capture["frames"], capture["shown"])
    return Calibration("flash", scores, FLASH_MIN_SCORE, target, skipped)


def report_lines(calibration: Calibration) -> list[str]:
    if not calibration.scores:
        return [f"{calibration.name}: no genuine item to calibrate on ({calibration.skipped} skipped)"]
    half = [s for name, s in calibration.scores.items() if in_calibration_half(name)]
    held_out = [s for name, s in calibration.scores.items() if not in_calibration_half(name)]
    everything = list(calibration.scores.values())

    def bpcer(scores: list[float], threshold: float) -> str:
        refused = sum(score < threshold for score in scores)
        low, high = clopper_pearson_interval(refused, len(scores))
        return f"BPCER {refused}/{len(scores)} = {refused / len(scores):.1%} [{low:.1%}, {high:.1%}] (95% exact)"

    lines = [
        f"{calibration.name}: {len(everything)} genuine items, {calibration.skipped} skipped (no usable face / data)",
        f"  scores: min {min(everything):.4f}, 5th percentile {threshold_for(everything, 0.05):.4f}, "
        f"median {sorted(everything)[len(everything) // 2]:.4f}",
    ]
    if half and held_out:
        chosen = threshold_for(half, calibration.target)
        lines += [
            f"  calibration half: threshold for BPCER <= {calibration.target:.1%}: {chosen:.4f} (on {len(half)} items)",
            f"  held-out half at {chosen:.4f}: {bpcer(held_out, chosen)}",
        ]
    in_force = bpcer(everything, calibration.in_force)
    lines.append(f"  threshold in force {calibration.in_force:.4f}, on all items: {in_force}")
    return lines
