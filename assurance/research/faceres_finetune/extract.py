"""Cut every calibration face's FaceRes input once, through the production path, into an .npz cache.

    .venv/bin/python -m assurance.research.faceres_finetune.extract /work/shared/data/faces-{dev,aaf,pairs} \
        --output /work/research-cache/faceres-crops.npz --jobs 2

Only the calibration half (assurance.calibration.split_half on LabelledFace.split_key) is
read; faces in label_errors.csv are left out; a picture without one dominant face is left out, as
calibrate_age_policy leaves it out. The cache holds crops of research photos: it stays outside the repository.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from assurance.calibration import split_half
from assurance.label_audit import audited_errors
from assurance.labels import labelled_folder
from assurance.processes import forked_map


def calibration_faces(directories: list[str]) -> list[tuple[str, object]]:
    """(set name, LabelledFace) for the calibration half of each folder, label errors left out."""
    return half_faces(directories, "calibration")


def half_faces(directories: list[str], half: str) -> list[tuple[str, object]]:
    """(set name, LabelledFace) for one half of each folder (calibration.split_half), label errors left out."""
    errors = audited_errors()
    faces = []
    for directory in directories:
        name = Path(directory).resolve().name
        for face in labelled_folder(directory).faces:
            if (name, face.name) not in errors and split_half(face.split_key) == half:
                faces.append((name, face))
    return faces


def read_paths(function, paths: list[Path], jobs: int) -> list:
    """`function` of every path in `jobs` forked processes, in order, saying how far it is every 200 images."""
    started = time.monotonic()
    results = []
    for number, result in enumerate(forked_map(function, paths, jobs), start=1):
        results.append(result)
        if number % 200 == 0:
            print(f"{number}/{len(paths)} images, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return results


def save_kept(output: Path, faces: list[tuple[str, object]], results: list, names: tuple[str, ...], **extra) -> list:
    """Save the faces whose result is not None into an .npz: each part of the results stacked under its name,
    with the faces' true ages, sets, file names and split keys (and `extra` arrays); return their indices."""
    kept = [i for i, result in enumerate(results) if result is not None]
    output.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        output,
        **{name: np.stack([results[i][part] for i in kept]) for part, name in enumerate(names)},
        ages=np.array([faces[i][1].true_age for i in kept], dtype=np.int16),
        sets=np.array([faces[i][0] for i in kept]),
        names=np.array([faces[i][1].name for i in kept]),
        split_keys=np.array([faces[i][1].split_key for i in kept]),
        **extra,
    )
    return kept


def _crop(path: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """The dominant face's 224x224 FaceRes input and its aligned 64x64 chip (the third age network's input,
    assurance/research/age_networks), or None when production would find no single face."""
    from checks.faces import dominant_face, face_engine
    from checks.images import ImageRejected, open_image

    try:
        found, rival = dominant_face(face_engine().faces(open_image(path.read_bytes()), description_inputs=True))
    except ImageRejected:
        return None
    if found is None or rival:
        return None
    return found.description_input, found.chip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+")
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if Path(__file__).resolve().parents[3] in args.output.resolve().parents:
        parser.error("the cache holds crops of research photos: write it outside the repository")
    faces = calibration_faces(args.directories)
    started = time.monotonic()
    crops = read_paths(_crop, [face.path for _, face in faces], args.jobs)
    kept = save_kept(args.output, faces, crops, ("crops", "chips"))
    for name in dict.fromkeys(s for s, _ in faces):
        total = sum(s == name for s, _ in faces)
        found = sum(faces[i][0] == name for i in kept)
        print(f"{name}: {total} calibration images, {found} with one dominant face")
    print(f"{len(kept)} crops written to {args.output} in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
