"""Describe every photo of a pairs folder once, through the production path, into an .npz cache.

    .venv/bin/python -m assurance.research.holder_match.extract /work/shared/data/faces-pairs \
        --output var/holder-match/pairs.npz

For each photo: the dominant face (checks.faces, as the holder match finds it), dlib's descriptor of its 150x150
chip (checks.face_match, mirror averaged), HSE FaceRes's 1,024 pooled features of its 224x224 crop
(checks.faces.FaceEngine.descriptions, mirror averaged) and MobileFaceNet's embedding
(assurance.research.holder_match.mobilefacenet, when it has written its network: NaNs otherwise). A photo without
one dominant face is kept with NaNs. The variants the second round measured (issue 44) are kept beside them:
dlib's descriptor of the face alone and of its mirror alone, of the face alone on chips padded by 15 % and 35 %
instead of 25 %, face-api's age, and the face found again in the picture enlarged twice (HOG finds faces from
about 80 px wide) for the photos where the production path finds none (`upsampled` marks them).
The cache holds numbers derived from research photos: it stays under var/ (not in the repository).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

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


# Small changes of dlib's chip (degrees of rotation, pixels of shift right and down, scale), each read with its
# mirror image and all averaged: test-time augmentation, as dlib's own num_jitters does at random (dlib's
# jitter_image: up to 3 degrees, 2 % of the chip's size, 0.97-1 of its scale, a mirror half the time).
JITTERS = ((0, 0, 0, 1.0), (3, 0, 0, 1.0), (-3, 0, 0, 1.0), (0, 3, 0, 1.0), (0, -3, 0, 1.0), (0, 0, 3, 1.0),
           (0, 0, -3, 1.0), (0, 0, 0, 0.97))  # fmt: skip


def jittered(chip: np.ndarray, angle: float, dx: float, dy: float, scale: float) -> np.ndarray:
    """The chip turned by `angle` degrees and enlarged `1 / scale` times about its centre, then shifted."""
    size = chip.shape[1]
    centre = (size - 1) / 2
    turn = np.deg2rad(angle)
    # PIL's affine maps each output pixel to the input pixel it reads: the inverse of the change.
    cos, sin = np.cos(turn) * scale, np.sin(turn) * scale
    a, b, d, e = cos, sin, -sin, cos
    c = centre - a * (centre + dx) - b * (centre + dy)
    f = centre - d * (centre + dx) - e * (centre + dy)
    picture = Image.fromarray(chip).transform(
        (size, size), Image.Transform.AFFINE, (a, b, c, d, e, f), resample=Image.Resampling.BILINEAR
    )
    return np.asarray(picture)


def describe(path: Path, *, upsample: bool = False) -> dict[str, np.ndarray] | None:
    import dlib

    from checks.face_match import face_matcher
    from checks.faces import _analysis_pixels, dominant_face, face_engine

    from .mobilefacenet import aligned_face

    with Image.open(path) as picture:
        picture.load()
        if upsample:
            picture = picture.resize((picture.width * 2, picture.height * 2), Image.Resampling.BILINEAR)
        max_side = 1600 if upsample else 800
        engine = face_engine()
        face, rival = dominant_face(
            engine.faces(picture, identity_chips=True, description_inputs=True, max_side=max_side)
        )
        pixels = _analysis_pixels(picture, max_side=max_side)  # what faces() found the landmarks on
    if face is None or rival:
        return None
    matcher = face_matcher()
    chip = np.ascontiguousarray(face.identity_chip)
    mirror = np.ascontiguousarray(chip[:, ::-1])
    face_alone, mirror_alone = matcher.read([chip, mirror])
    described = {"dlib_face": face_alone, "dlib_mirror": mirror_alone}
    described["dlib"] = (described["dlib_face"] + described["dlib_mirror"]) / 2
    changed = [jittered(chip, *jitter) for jitter in JITTERS]
    described["dlib_jitter"] = matcher.read(changed + [c[:, ::-1] for c in changed]).mean(axis=0)
    grey = np.repeat(np.asarray(Image.fromarray(chip).convert("L"))[:, :, None], 3, axis=2)
    equalised = np.repeat(np.asarray(ImageOps.equalize(Image.fromarray(chip).convert("L")))[:, :, None], 3, axis=2)
    for name, version in (("dlib_grey", grey), ("dlib_equalised", equalised)):
        described[name] = matcher.read([version, np.ascontiguousarray(version[:, ::-1])]).mean(axis=0)
    described["dlib_shift"] = matcher.read([c for c, j in zip(changed, JITTERS) if j[0] == 0 and j[3] == 1.0]).mean(
        axis=0
    )
    left, top, right, bottom = face.box
    shape = dlib.full_object_detection(
        dlib.rectangle(left, top, right, bottom), [dlib.point(int(x), int(y)) for x, y in face.landmarks]
    )
    for padding in (15, 35):
        padded = np.asarray(dlib.get_face_chip(pixels, shape, size=150, padding=padding / 100), dtype=np.uint8)
        described[f"dlib_pad{padding}"] = matcher.read([padded])[0]
    features, faceres_ages = engine.descriptions([face.description_input])
    described["faceres"], described["faceres_age"] = features[0], faceres_ages[:1]
    described["faceapi_age"] = engine.ages([face.age_input])[:1]
    described["mobilefacenet"] = (
        embedding(aligned_face(pixels, face.landmarks)) if IDENTITY_NETWORK.is_file() else np.full(192, np.nan)
    )
    return described


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--output", type=Path, required=True)
    arguments = parser.parse_args()
    photos = person_photos(arguments.directory)
    rows: dict[str, list[np.ndarray]] = {}
    upsampled = []
    started = time.monotonic()
    for number, photo in enumerate(photos, start=1):
        described = describe(photo.path)
        upsampled.append(described is None)
        if described is None:
            described = describe(photo.path, upsample=True)
        for name, values in (described or {}).items():
            rows.setdefault(name, []).append((number - 1, values))
        if number % 50 == 0:
            print(f"{number}/{len(photos)} photos, {time.monotonic() - started:.0f} s", flush=True)
    arguments.output.parent.mkdir(parents=True, exist_ok=True)
    columns = {}
    for name, found in rows.items():
        column = np.full((len(photos), len(found[0][1])), np.nan)
        for index, values in found:
            column[index] = values
        columns[name] = column
    np.savez(
        arguments.output,
        names=np.array([photo.path.name for photo in photos]),
        people=np.array([photo.person for photo in photos]),
        ages=np.array([photo.age for photo in photos]),
        upsampled=np.array(upsampled),
        **columns,
    )


if __name__ == "__main__":
    main()
