"""Read every calibration face's age through both age networks on several crops of the same face.

    .venv/bin/python -m assurance.research.age_tta.read /work/shared/data/faces-{dev,aaf,pairs} \
        --output /work/research-cache/age-tta.npz --jobs 2

Each face is found as production finds it (checks.faces: dlib's detector and 5 landmarks, one dominant
face); its landmarks are then moved by a small similarity (VARIANTS: zoom in and out, shifted a little each
way, turned 5 degrees each way) and each network reads the crop the moved landmarks give, face and mirror
averaged as in production. Variant 0 is production's own crop. Only the calibration half is read; faces in
label_errors.csv are left out. The cache holds ages, not pictures, but stays outside the repository with the
other research caches.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from assurance.research.faceres_finetune.extract import calibration_faces, read_paths, save_kept

# (zoom, shift right, shift down, turn in degrees); zoom > 1 takes in more around the face, shifts are
# fractions of twice the landmarks' root-mean-square distance from their centre (0.05: a few pixels).
VARIANTS = (
    (1.0, 0.0, 0.0, 0.0),
    (1.08, 0.0, 0.0, 0.0),
    (0.93, 0.0, 0.0, 0.0),
    (1.0, 0.05, 0.0, 0.0),
    (1.0, -0.05, 0.0, 0.0),
    (1.0, 0.0, 0.05, 0.0),
    (1.0, 0.0, -0.05, 0.0),
    (1.0, 0.0, 0.0, 5.0),
    (1.0, 0.0, 0.0, -5.0),
)


def moved(landmarks: np.ndarray, zoom: float, right: float, down: float, degrees: float) -> np.ndarray:
    """The landmarks carried by a similarity about their centre: the crop placed from them follows it."""
    centre = landmarks.mean(axis=0)
    scale = np.sqrt(((landmarks - centre) ** 2).sum(axis=1).mean())
    angle = np.radians(degrees)
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return centre + zoom * (landmarks - centre) @ turn.T + scale * 2 * np.array([right, down])


def _read(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    from checks.faces import (
        _DETECTION_MAX_SIDE,
        _analysis_pixels,
        age_network_input,
        description_network_input,
        dominant_face,
        face_engine,
    )
    from checks.images import ImageRejected, open_image

    engine = face_engine()
    try:
        image = open_image(path.read_bytes())
    except ImageRejected:
        return None
    found, rival = dominant_face(engine.faces(image))
    if found is None or rival:
        return None
    pixels = _analysis_pixels(image, max_side=_DETECTION_MAX_SIDE)
    variants = [moved(found.landmarks, *variant) for variant in VARIANTS]
    face_api = engine.ages([age_network_input(pixels, landmarks) for landmarks in variants])
    faceres = engine.descriptions([description_network_input(pixels, landmarks) for landmarks in variants])[1]
    return face_api, faceres


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="read only the first N faces (a quick look)")
    args = parser.parse_args(argv)
    if Path(__file__).resolve().parents[3] in args.output.resolve().parents:
        parser.error("research caches stay outside the repository")
    faces = calibration_faces(args.directories)
    if args.limit:
        faces = faces[:: max(1, len(faces) // args.limit)][: args.limit]
    started = time.monotonic()
    readings = read_paths(_read, [face.path for _, face in faces], args.jobs)
    kept = save_kept(args.output, faces, readings, ("face_api", "faceres"), variants=np.array(VARIANTS))
    print(
        f"{len(kept)} of {len(faces)} faces read through {len(VARIANTS)} crops each, "
        f"in {time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
