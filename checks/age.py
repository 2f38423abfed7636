"""Age estimation from a selfie: one dominant face, the age network's distribution, a confidence.

The picture must show one dominant face: none, or a second confident face at least half the
size of the largest, asks for a retake (see checks.faces.dominant_face).

The age network classifies an aligned 64x64 face into 81 classes, class k standing for age k
(class 0: under one year, counted as 0.25). For its probabilities p_0 .. p_80:

    estimated_age  = sum_k  year_k * p_k          (expected value; year_0 = 0.25, year_k = k)
    age_confidence = sum_{k >= threshold_age} p_k  (probability mass at or above the threshold)

where threshold_age = age_limit + buffer (tenant settings). age_confidence is the model's own
probability that the person is at least threshold_age years old; class 80 is "80 or older", so a
threshold above 80 gives 0. The decision rule (approve when estimated_age >= threshold_age and
age_confidence >= min_confidence, else ask for a document) is the caller's.
"""

from __future__ import annotations

import numpy as np

from checks.faces import AGE_CLASS_YEARS, dominant_face, face_engine
from checks.images import ImageRejected, open_image
from checks.results import AgeEstimation, Retake

MESSAGE_NO_FACE = "We could not find a face. Face the camera in good light."
MESSAGE_SEVERAL_FACES = "We can see more than one face. Make sure only you are in the picture."


def estimate_age(image: bytes, *, threshold_age: int) -> AgeEstimation | Retake:
    """Estimate the age of the one dominant face in a selfie, or ask for a retake."""
    try:
        picture = open_image(image)
    except ImageRejected as rejected:
        return Retake(rejected.message)
    face, rival = dominant_face(face_engine().faces(picture))
    if face is None:
        return Retake(MESSAGE_NO_FACE)
    if rival:
        return Retake(MESSAGE_SEVERAL_FACES)
    probabilities = face_engine().age_probabilities(face.chip)
    return AgeEstimation(
        estimated_age=expected_age(probabilities),
        age_confidence=mass_at_or_above(probabilities, threshold_age),
    )


def expected_age(probabilities: np.ndarray) -> float:
    """Expected value of an 81-class age distribution, in years."""
    p = _distribution(probabilities)
    return float(np.dot(p, AGE_CLASS_YEARS))


def mass_at_or_above(probabilities: np.ndarray, threshold_age: int) -> float:
    """Probability mass of the classes whose age is at least threshold_age, clamped to 0..1."""
    p = _distribution(probabilities)
    mass = float(p[AGE_CLASS_YEARS >= threshold_age].sum())
    return min(1.0, max(0.0, mass))


def _distribution(probabilities: np.ndarray) -> np.ndarray:
    p = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    if p.shape != AGE_CLASS_YEARS.shape or not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("an age distribution has 81 finite, non-negative probabilities")
    total = p.sum()
    if total <= 0:
        raise ValueError("an age distribution must not be all zero")
    # The network's softmax sums to 1 up to float32 rounding; renormalise so the mass stays <= 1.
    return p / total
