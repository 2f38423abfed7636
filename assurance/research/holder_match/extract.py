"""Describe every photo of a pairs folder once, through the production path, into an .npz cache.

    .venv/bin/python -m assurance.research.holder_match.extract /work/shared/data/faces-pairs \
        --output var/holder-match/pairs.npz

For each photo: the dominant face (checks.faces, as the holder match finds it), dlib's descriptor of its
150x150 chip (checks.face_match, mirror averaged), HSE FaceRes's 1,024 pooled features of its 224x224 crop
(checks.faces.FaceEngine.descriptions, mirror averaged) and MobileFaceNet's embedding (assurance.research.holder_match.
mobilefacenet, which must have written its network first). A photo without one dominant face is kept with NaNs.
The cache holds numbers derived from research photos: it stays under var/ (not in the repository).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from PIL import Image

from assurance.face_match_evaluation import person_photos

IDENTITY_NETWORK = Path(__file__).resolve().parents[3] / "var" / "holder-match" / "face_identity_net.onnx"
_identity = []


def embedding(face: np.ndarray) -> np.ndarray:
    """MobileFaceNet's embedding of the aligned face and its mirror image, averaged and made length 1."""
    import onnxruntime

    if not _identity:
        _identity.append(onnxruntime.InferenceSession(str(IDENTITY_NETWORK), providers=["CPUExecutionProvider"]))
    batch = np.stack([face, face[:, ::-1]]).astype(np.float32)
    (values,) = _identity[0].run(["embedding"], {"face": batch})
    mean = values.mean(axis=0)
    return mean / np.linalg.norm(mean)


def describe(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    from checks.face_match import face_matcher
    from checks.faces import _analysis_pixels, dominant_face, face_engine

    from .mobilefacenet import aligned_face

    with Image.open(path) as picture:
        picture.load()
        face, rival = dominant_face(face_engine().faces(picture, identity_chips=True, description_inputs=True))
        pixels = _analysis_pixels(picture, max_side=800)  # what faces() found the landmarks on
    if face is None or rival:
        return None
    dlib_values = face_matcher().descriptor(face.identity_chip).values
    features, _ = face_engine().descriptions([face.description_input])
    return dlib_values, features[0], embedding(aligned_face(pixels, face.landmarks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--output", type=Path, required=True)
    arguments = parser.parse_args()
    photos = person_photos(arguments.directory)
    dlib_rows, faceres_rows, mobilefacenet_rows = [], [], []
    started = time.monotonic()
    for number, photo in enumerate(photos, start=1):
        described = describe(photo.path)
        dlib_rows.append(described[0] if described else np.full(128, np.nan))
        faceres_rows.append(described[1] if described else np.full(1024, np.nan))
        mobilefacenet_rows.append(described[2] if described else np.full(192, np.nan))
        if number % 50 == 0:
            print(f"{number}/{len(photos)} photos, {time.monotonic() - started:.0f} s", flush=True)
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        arguments.output,
        names=np.array([photo.path.name for photo in photos]),
        people=np.array([photo.person for photo in photos]),
        ages=np.array([photo.age for photo in photos]),
        dlib=np.stack(dlib_rows),
        faceres=np.stack(faceres_rows),
        mobilefacenet=np.stack(mobilefacenet_rows),
    )


if __name__ == "__main__":
    main()
