"""Age estimation from selfie frames: one dominant face per frame, face-api's age network, a median.

Each frame must show one dominant face: none, or a second confident face at least half the size
of the largest, makes that frame unusable (see checks.faces.dominant_face). With several frames
(the frontal frames of the liveness capture), the estimate is the median over the usable frames,
which damps a single frame's blur or expression; when no frame is usable the user is asked to
retake, with the reason of the first frame.

The network (checks.faces) regresses an age in years: a point estimate, not a distribution. The
confidence that the person is at least threshold_age is read from an error model measured on
labelled faces (bench/age_network.py, calibration half of faces-dev): the estimate's error is
taken as normal with standard deviation AGE_ERROR_SD years, so

    age_confidence = P(true age >= threshold_age) = Phi((estimated_age - threshold_age) / AGE_ERROR_SD)

The decision rule (approve when estimated_age >= threshold_age and age_confidence >=
min_confidence, else ask for a document) is the caller's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from checks.faces import dominant_face, face_engine
from checks.images import ImageRejected, open_image
from checks.results import AgeEstimation, Retake

MESSAGE_NO_FACE = "We could not find a face. Face the camera in good light."
MESSAGE_SEVERAL_FACES = "We can see more than one face. Make sure only you are in the picture."

# Standard deviation of (estimate - true age) at ages 13-30 on faces-dev's calibration half,
# printed by bench/age_network.py ("error sd 13-30").
AGE_ERROR_SD = 4.9


def estimate_age(frames: bytes | Sequence[bytes], *, threshold_age: int) -> AgeEstimation | Retake:
    """Estimate the age of the one dominant face in one or several frames, or ask for a retake."""
    if isinstance(frames, (bytes, bytearray, memoryview)):
        frames = [bytes(frames)]
    ages, first_retake = frame_ages(frames)
    if not ages:
        return first_retake or Retake(MESSAGE_NO_FACE)
    estimated = float(np.median(ages))
    return AgeEstimation(estimated_age=estimated, age_confidence=confidence_at_least(estimated, threshold_age))


def frame_ages(frames: Sequence[bytes]) -> tuple[list[float], Retake | None]:
    """The network's estimate for each frame with one dominant face, and the first frame's retake."""
    engine = face_engine()
    inputs = []
    first_retake = None
    for frame in frames:
        try:
            picture = open_image(frame)
        except ImageRejected as rejected:
            first_retake = first_retake or Retake(rejected.message)
            continue
        face, rival = dominant_face(engine.faces(picture))
        if face is None or rival:
            first_retake = first_retake or Retake(MESSAGE_SEVERAL_FACES if rival else MESSAGE_NO_FACE)
            continue
        inputs.append(face.age_input)
    return [float(age) for age in engine.ages(inputs)], first_retake


def confidence_at_least(estimated_age: float, threshold_age: float) -> float:
    """P(true age >= threshold_age) under the normal error model, clamped to 0..1."""
    z = (estimated_age - threshold_age) / AGE_ERROR_SD
    return min(1.0, max(0.0, 0.5 * math.erfc(-z / math.sqrt(2))))
