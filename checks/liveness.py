"""Active liveness: a random head-turn challenge, checked frame by frame on the face landmarks.

Vocabulary (``CHALLENGE_STEPS``):
  "left"   - turn your head to YOUR left (the nose moves towards the right edge of the raw,
             unmirrored camera frame; a mirrored selfie preview must not be what is sent)
  "right"  - turn your head to your right
  "center" - look straight at the camera
A challenge is three moves then "center" (the frontal frame the age estimate uses), consecutive
steps never equal, e.g. ["left", "center", "right", "center"] or ["right", "left", "right", "center"].

The client sends several frames per step, in capture order, each labelled with its step. The
frames pass when, all at once:
  * their labels follow the challenge, step by step;
  * they are not one still picture (identical or near-identical frames fail);
  * each step has a frame in its pose: for "center", a head_yaw within CENTER_YAW of 0; for a
    turn, a head_yaw of at least TURN_YAW in the asked direction, measured from the person's own
    frontal yaw (a real head turned about 15-20 degrees gets there), with the parallax of a real
    head: a flat photo tilted 45 degrees foreshortens as much as a head turned 45 degrees but its
    nose barely moves against the eyes, so it fails MIN_PARALLAX (see checks.head_pose);
  * the same face is there throughout: it does not jump in position or size between consecutive
    frames, frames of the same pose look alike (aligned face crops correlate), and the age model's
    estimate of the turning face agrees with that of the frontal face (a swap to someone else's
    photo for the frontal frame shows up as a jump in apparent age).
Each condition gives a margin in 0..1 that is 0.5 exactly at its threshold; liveness_score is the
smallest margin, and is_live is liveness_score >= 0.5. Frames without a face in too many places,
or with a second face, ask for a retake instead.

Attacks on the capture itself (docs/pad.md). When the page sends its capture record (`Capture`:
the camera's label, the time the page saw each frame, and the step durations the server issued):
  * "virtualCamera": the camera's label names a known virtual camera (OBS, ManyCam, ...);
  * "timing": frame times go backwards, come faster or slower than a camera at the page's pace, or
    fall outside their step's issued window (the step's start plus GRACE_MS to its end); and every
    frame of a step, not only the best one, must show the asked pose, so a recording whose pose
    changes do not follow this session's random timing fails;
  * "replay": two frames that are not consecutive are the same picture to within REPLAY_DIFFERENCE
    (32x32 grey fingerprints, kept in memory during the analysis only): a looped clip or a replayed
    frame, which a camera sensor never produces;
  * "flash": the server issued a colour per frame (checks.flash) and the page did not show it, or the
    face's skin does not follow it;
  * "passive": the MiniFASNet models (checks.passive) take the frontal frames (the final "center"
    step's) for a print or a screen.
A signal in `flag_only` is reported without refusing; any other refuses (is_live False, score 0).
Without a capture record (the photo-upload fallback) only "replay" and "passive" can fire.

The thresholds were set on synthetic turns of a real face (tests/support/faces.py), not on a
corpus of real captures: tune them on real sessions (the debug log names the weakest condition).
"""

from __future__ import annotations

import hashlib
import logging
import math
import secrets
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageFilter

from checks.faces import Face, dominant_face, face_engine
from checks.flash import FLASH_MIN_SCORE, flash_score, skin_colour
from checks.head_pose import face_width_ratio, head_yaw
from checks.images import ImageRejected, open_image
from checks.passive import PASSIVE_THRESHOLD, passive_models
from checks.results import Liveness, Retake, gettext_noop

logger = logging.getLogger(__name__)

CHALLENGE_STEPS = ("left", "right", "center")
CHALLENGE_MOVES = 3  # moves before the final "center"

TURN_YAW = 0.10  # head_yaw a turn must reach in its direction, from the person's frontal yaw
CENTER_YAW = 0.08  # |head_yaw| a frontal frame may have
BASELINE_LIMIT = 0.04  # how far from 0 a person's frontal yaw may shift the turns' zero
AGE_FRAMES = 3  # frontal frames the age estimate takes the median of
MIN_PARALLAX = 0.6  # turn yaw per unit of foreshortening: a head ~1 or more, a tilted print ~0.4
MIN_FORESHORTENING = 0.15  # below it, foreshortening is noise and not held against a turn
MAX_JUMP = 0.5  # face centre movement between consecutive frames, in face widths
MAX_SCALE_CHANGE = 1.5  # face size ratio between consecutive frames
SAME_POSE_YAW = 0.06  # two frames closer than this in yaw are compared by appearance
MIN_SAME_POSE_SIMILARITY = 0.5  # correlation of their aligned face crops
MAX_AGE_GAP = 15.0  # years between the frontal and the turning face's estimated ages
STILL_DIFFERENCE = 0.5  # mean grey-level change below which two frames are the same picture

REPLAY_DIFFERENCE = 0.1  # mean grey-level change (of 255) under which two frames are one replayed picture
GRACE_MS = 900  # time a user has to follow an instruction before its frames count
SLACK_MS = 400  # lateness a busy phone may add to a step's end
MIN_GAP_MS = 120  # frames closer than this do not come from the page's capture pace
MAX_GAP_MS = 5_000  # nor frames further apart
STEP_MS = (2_400, 4_000)  # the range of the issued step durations
SIGNALS = ("virtualCamera", "timing", "replay", "flash", "passive")
# Labels of the virtual cameras the injection tools install (lower case); Chromium's own fake
# device ("fake_device_0") is left out: the browser tests use it for the still-photo attack.
VIRTUAL_CAMERA_WORDS = (
    "virtual",
    "obs",
    "manycam",
    "snap camera",
    "xsplit",
    "camtwist",
    "e2esoft",
    "vcam",
    "splitcam",
    "youcam",
    "droidcam",
    "iriun",
    "epoccam",
    "mmhmm",
    "chromacam",
    "nvidia broadcast",
)

MAX_FRAMES_PER_STEP = 6  # more are sampled down, so a long upload cannot cost unbounded CPU
MIN_FACE_FRACTION = 0.5  # of the analysed frames must show a face, else retake
_ANALYSIS_MAX_SIDE = 640

MESSAGE_NO_FRAMES = gettext_noop("We did not receive the pictures from your camera. Please try again.")
MESSAGE_FACE_LOST = gettext_noop(
    "We could not see your face clearly during the head turns. Keep your whole face in view, "
    "in good light, and turn your head only slightly."
)
MESSAGE_SEVERAL_FACES = gettext_noop("We can see more than one face. Make sure only you are in the picture.")


def challenge_new() -> list[str]:
    """A random challenge: CHALLENGE_MOVES moves, never the same step twice in a row, then "center"."""
    steps = [secrets.choice(("left", "right"))]
    while len(steps) < CHALLENGE_MOVES:
        options = [step for step in CHALLENGE_STEPS if step != steps[-1]]
        if len(steps) == CHALLENGE_MOVES - 1:
            options = [step for step in options if step != "center"]  # "center" comes last anyway
        steps.append(secrets.choice(options))
    steps.append("center")
    return steps


@dataclass(frozen=True)
class Capture:
    """What the page recorded of its capture: the camera's label and, per frame in upload order, the
    milliseconds since the user pressed Start and the screen colour it showed (`shown`); `durations` are
    the step durations and `flash` the colours (one per frame) the server issued. No `flash`: a capture
    issued before the colour challenge existed, not held to it."""

    label: str
    times: tuple[int, ...]
    durations: tuple[int, ...]
    flash: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()


def challenge_durations(challenge: Sequence[str]) -> list[int]:
    """Random step durations (ms, in steps of 100): the page follows them, the check holds frames to them."""
    low, high = STEP_MS
    return [low + 100 * secrets.randbelow((high - low) // 100 + 1) for _ in challenge]


def is_virtual_camera(label: str) -> bool:
    label = label.lower()
    return any(word in label for word in VIRTUAL_CAMERA_WORDS)


def check_liveness(
    frames: list[tuple[str, bytes]],
    challenge: list[str],
    capture: Capture | None = None,
    *,
    flag_only: frozenset[str] = frozenset(),
) -> Liveness | Retake:
    """Decide whether the labelled frames show a live person performing the challenge."""
    _validate_challenge(challenge)
    if not frames:
        return Retake(MESSAGE_NO_FRAMES)
    groups = _group_by_step(frames)
    if [step for step, _ in groups] != list(challenge):
        return Liveness(is_live=False, liveness_score=0.0)
    signals = []
    if capture is not None and is_virtual_camera(capture.label):
        signals.append("virtualCamera")
    if capture is not None and not _timing_followed(frames, challenge, capture):
        signals.append("timing")
    positions = _sampled_positions(groups)
    # The passive models read the last step's frames, the frontal ones the age estimate uses (~30 ms a frame).
    last = len(groups) - 1
    analysed = [
        [_analyse(images[i], passive=index == last) for i in indexes]
        for index, ((_, images), indexes) in enumerate(zip(groups, positions))
    ]
    sequence = [frame for group in analysed for frame in group]
    if _is_replay(sequence):
        signals.append("replay")
    if capture is not None and capture.flash and not _flash_followed(groups, positions, analysed, capture):
        signals.append("flash")
    if _passive_veto(sequence):
        signals.append("passive")
    if capture is not None and "timing" not in signals and not _every_frame_posed(groups, analysed):
        signals.append("timing")
    if any(frame.several_faces for frame in sequence):
        return Retake(MESSAGE_SEVERAL_FACES)
    with_face = [frame for frame in sequence if frame.face is not None]
    if len(with_face) < MIN_FACE_FRACTION * len(sequence) or any(
        all(frame.face is None for frame in group) for group in analysed
    ):
        return Retake(MESSAGE_FACE_LOST)
    if signals:
        logger.info("liveness signals: %s", ", ".join(signals))
    if any(signal not in flag_only for signal in signals):
        return Liveness(is_live=False, liveness_score=0.0, signals=tuple(signals))
    if _is_still(sequence):
        return Liveness(is_live=False, liveness_score=0.0, signals=tuple(signals))
    margins = _pose_margins(groups, analysed) + _same_face_margins(with_face, analysed, challenge)
    weakest, score = min(margins, key=lambda item: item[1])
    logger.debug("liveness score %.3f, weakest condition %s", score, weakest)
    score = math.floor(float(score) * 10_000) / 10_000  # rounded down, so is_live stays score >= 0.5
    return Liveness(is_live=score >= 0.5, liveness_score=score, signals=tuple(signals))


def _timing_followed(frames: list[tuple[str, bytes]], challenge: list[str], capture: Capture) -> bool:
    """The frame times are a camera's at the page's pace, each inside its step's issued window."""
    times, durations = capture.times, capture.durations
    if len(times) != len(frames) or len(durations) != len(challenge):
        return False
    gaps = [b - a for a, b in zip(times, times[1:])]
    if any(gap < MIN_GAP_MS or gap > MAX_GAP_MS for gap in gaps):
        return False
    starts = np.cumsum([0, *durations])
    index = -1
    previous = None
    for (step, _), time in zip(frames, times):
        if step != previous:
            index, previous = index + 1, step
        if not starts[index] + GRACE_MS <= time <= starts[index + 1] + SLACK_MS:
            return False
    return True


def _every_frame_posed(groups: list[tuple[str, list[bytes]]], analysed: list[list[_Frame]]) -> bool:
    """Each frame taken after the grace shows its step's pose: a turn at least half way, a centre nearly frontal."""
    frontal = [f.yaw for (step, _), group in zip(groups, analysed) if step == "center" for f in group if f.face]
    baseline = float(np.clip(np.median(frontal), -BASELINE_LIMIT, BASELINE_LIMIT)) if frontal else 0.0
    for (step, _), group in zip(groups, analysed):
        for frame in group:
            if frame.face is None:
                continue
            turn = frame.yaw - baseline
            if step == "center" and abs(turn) > 2 * CENTER_YAW:
                return False
            if step != "center" and (1.0 if step == "left" else -1.0) * turn < TURN_YAW / 2:
                return False
    return True


def _sampled_positions(groups: list[tuple[str, list[bytes]]]) -> list[list[int]]:
    """Per step, the indexes (within the step) of the frames analysed: all, or MAX_FRAMES_PER_STEP spread out."""
    positions = []
    for _, images in groups:
        if len(images) <= MAX_FRAMES_PER_STEP:
            positions.append(list(range(len(images))))
        else:
            positions.append([int(i) for i in np.linspace(0, len(images) - 1, MAX_FRAMES_PER_STEP).round()])
    return positions


def _flash_followed(
    groups: list[tuple[str, list[bytes]]], positions: list[list[int]], analysed: list[list[_Frame]], capture: Capture
) -> bool:
    """The page showed the issued colours, frame by frame, and the face's skin followed them (checks.flash)."""
    count = sum(len(images) for _, images in groups)
    issued = [capture.flash[i % len(capture.flash)] for i in range(count)]
    if list(capture.shown) != issued:
        return False
    score = _flash_score(groups, positions, analysed, issued)
    logger.debug("flash score %.3f", score)
    return score >= FLASH_MIN_SCORE


def _flash_score(
    groups: list[tuple[str, list[bytes]]], positions: list[list[int]], analysed: list[list[_Frame]], shown: list[str]
) -> float:
    steps, colours, skins = [], [], []
    offset = 0
    for index, ((_, images), indexes, group) in enumerate(zip(groups, positions, analysed)):
        for position, frame in zip(indexes, group):
            steps.append(str(index))
            colours.append(shown[(offset + position) % len(shown)])
            skins.append(frame.skin)
        offset += len(images)
    return flash_score(steps, colours, skins)


def capture_flash_score(frames: list[tuple[str, bytes]], flash: Sequence[str]) -> float:
    """The flash score (checks.flash) of a capture's frames against the colours shown with them, for calibrating
    FLASH_MIN_SCORE (assurance.pad_calibration)."""
    groups = _group_by_step(frames)
    positions = _sampled_positions(groups)
    analysed = [[_analyse(images[i]) for i in indexes] for (_, images), indexes in zip(groups, positions)]
    return _flash_score(groups, positions, analysed, list(flash))


def _passive_veto(sequence: list[_Frame]) -> bool:
    """The frontal frames' median real-face probability (checks.passive) is under the threshold."""
    scores = [frame.real for frame in sequence if frame.real is not None]
    if not scores:
        return False
    score = float(np.median(scores))
    logger.debug("passive real-face probability %.3f", score)
    return score < PASSIVE_THRESHOLD


def _is_replay(sequence: list[_Frame]) -> bool:
    """Two frames that are not consecutive are one picture: a looped or replayed clip."""
    pictures = [frame if frame.thumbnail.any() else None for frame in sequence]  # undecodable: no picture
    for index, first in enumerate(pictures):
        for second in pictures[index + 2 :]:
            if first is None or second is None:
                continue
            if float(np.abs(first.thumbnail - second.thumbnail).mean()) < REPLAY_DIFFERENCE:
                return True
    return False


def frontal_frame(frames: list[tuple[str, bytes]], challenge: list[str]) -> bytes:
    """The most frontal "center" frame (largest face on a tie)."""
    return frontal_frames(frames, challenge, count=1)[0]


def frontal_frames(frames: list[tuple[str, bytes]], challenge: list[str], *, count: int = AGE_FRAMES) -> list[bytes]:
    """Up to `count` "center" frames, most frontal first (largest face on a tie), for the age estimate.

    Frames whose face is turned beyond CENTER_YAW are left out when a more frontal one exists: the
    age network was trained on frontal faces.
    """
    del challenge  # the labels carry the steps; kept in the signature for symmetry
    candidates = [data for step, data in frames if step == "center"] or [data for _, data in frames]
    if not candidates:
        raise ValueError("no frames")
    posed = []
    for order, data in enumerate(candidates):
        pose = _pose(data)
        if pose is not None:
            posed.append(((round(abs(pose.yaw), 2), -pose.area, order), data))
    if not posed:
        return [candidates[-1]]
    posed.sort(key=lambda item: item[0])
    frontal = [data for key, data in posed if key[0] <= CENTER_YAW] or [posed[0][1]]
    return frontal[:count]


@dataclass(frozen=True)
class _Pose:
    yaw: float
    area: int


@dataclass(frozen=True)
class _Frame:
    face: Face | None
    several_faces: bool
    yaw: float
    crop: np.ndarray | None  # normalised grey aligned face, for appearance comparison
    age: float | None
    thumbnail: np.ndarray  # 32x32 grey of the whole frame, for still-picture detection
    digest: bytes
    skin: np.ndarray | None = None  # mean RGB of the face's skin, for the colour flash (checks.flash)
    real: float | None = None  # the passive models' real-face probability (frontal frames only)


def _analyse(data: bytes, *, passive: bool = False) -> _Frame:
    digest = hashlib.sha256(data).digest()
    try:
        picture = open_image(data)
    except ImageRejected:
        return _Frame(None, False, 0.0, None, None, np.zeros((32, 32)), digest)
    thumbnail = np.asarray(picture.convert("L").resize((32, 32), Image.Resampling.BILINEAR), float)
    engine = face_engine()
    face, several = dominant_face(engine.faces(picture, max_side=_ANALYSIS_MAX_SIDE))
    if face is None:
        _remember_pose(digest, None)
        return _Frame(None, False, 0.0, None, None, thumbnail, digest)
    yaw = head_yaw(face.landmarks)
    _remember_pose(digest, None if several else _Pose(yaw=yaw, area=face.area))
    age = float(engine.ages([face.age_input])[0])
    real = None
    if passive:
        scale = picture.width / face.image_size[0]  # the face was found on a rescaled copy
        real = passive_models().real_probability(picture, tuple(v * scale for v in face.box))
    crop = _normalised_crop(face.chip)
    return _Frame(face, several, yaw, crop, age, thumbnail, digest, skin_colour(face.chip), real)


def _normalised_crop(chip: np.ndarray) -> np.ndarray:
    grey = Image.fromarray(chip).convert("L").filter(ImageFilter.GaussianBlur(1))
    pixels = np.asarray(grey, dtype=np.float64)[8:56, 8:56]
    return (pixels - pixels.mean()) / (pixels.std() + 1e-6)


def _is_still(sequence: list[_Frame]) -> bool:
    if len({frame.digest for frame in sequence}) == 1:
        return True
    changes = [float(np.abs(a.thumbnail - b.thumbnail).mean()) for a, b in zip(sequence, sequence[1:])]
    return max(changes, default=0.0) < STILL_DIFFERENCE


def _margin(value: float, threshold: float, scale: float) -> float:
    """0.5 at the threshold, 1 at threshold + scale, 0 at threshold - scale (higher is better)."""
    return float(np.clip(0.5 + (value - threshold) / (2 * scale), 0.0, 1.0))


def _pose_margins(groups: list[tuple[str, list[bytes]]], analysed: list[list[_Frame]]) -> list[tuple[str, float]]:
    frontal = [
        frame
        for (step, _), group in zip(groups, analysed)
        if step == "center"
        for frame in group
        if frame.face is not None
    ]
    # A person's own frontal yaw is rarely exactly 0 (asymmetric faces, landmark bias): turns are
    # measured from it, within limits, so that a slightly turned "center" cannot halve a turn.
    baseline = float(np.clip(np.median([f.yaw for f in frontal]), -BASELINE_LIMIT, BASELINE_LIMIT))
    frontal_ratio = max(face_width_ratio(f.face.landmarks) for f in frontal)
    margins = []
    for index, ((step, _), group) in enumerate(zip(groups, analysed)):
        faces = [frame for frame in group if frame.face is not None]
        if step == "center":
            margin = max(_margin(-abs(f.yaw), -CENTER_YAW, CENTER_YAW) for f in faces)
        else:
            direction = 1.0 if step == "left" else -1.0
            margin = max(_turn_margin(direction * (f.yaw - baseline), f, frontal_ratio) for f in faces)
        margins.append((f"pose[{index}]:{step}", margin))
    return margins


def _turn_margin(turn: float, frame: _Frame, frontal_ratio: float) -> float:
    """How well one frame shows a turn: far enough, and with the parallax of a real head."""
    assert frame.face is not None
    if frontal_ratio <= 0:
        foreshortening = 0.0
    else:
        foreshortening = 1.0 - face_width_ratio(frame.face.landmarks) / frontal_ratio
    parallax = turn / max(foreshortening, MIN_FORESHORTENING)
    return min(_margin(turn, TURN_YAW, TURN_YAW), _margin(parallax, MIN_PARALLAX, MIN_PARALLAX / 2))


def _same_face_margins(
    with_face: list[_Frame], analysed: list[list[_Frame]], challenge: list[str]
) -> list[tuple[str, float]]:
    margins: list[tuple[str, float]] = []
    for before, after in zip(with_face, with_face[1:]):
        a, b = before.face, after.face
        assert a is not None and b is not None
        width = (a.width + b.width) / 2
        jump = float(np.hypot(*(_centre(a) - _centre(b)))) / width
        margins.append(("jump", _margin(-jump, -MAX_JUMP, MAX_JUMP)))
        scale_change = abs(float(np.log(b.area / a.area))) / 2  # log of the width ratio
        limit = float(np.log(MAX_SCALE_CHANGE))
        margins.append(("scale", _margin(-scale_change, -limit, limit)))
    # Any two frames in about the same pose, however far apart in time, must look alike.
    for index, first in enumerate(with_face):
        for second in with_face[index + 1 :]:
            if abs(first.yaw - second.yaw) <= SAME_POSE_YAW:
                similarity = float((first.crop * second.crop).mean())
                margins.append(("appearance", _margin(similarity, MIN_SAME_POSE_SIMILARITY, 0.3)))
    frontal_ages = [
        frame.age
        for step, group in zip(challenge, analysed)
        if step == "center"
        for frame in group
        if frame.age is not None
    ]
    turning_ages = [
        frame.age
        for step, group in zip(challenge, analysed)
        if step != "center"
        for frame in group
        if frame.age is not None
    ]
    if frontal_ages and turning_ages:
        gap = abs(float(np.median(frontal_ages)) - float(np.median(turning_ages)))
        margins.append(("age_gap", _margin(-gap, -MAX_AGE_GAP, MAX_AGE_GAP)))
    return margins


def _centre(face: Face) -> np.ndarray:
    left, top, right, bottom = face.box
    return np.array([(left + right) / 2, (top + bottom) / 2])


def _group_by_step(frames: Sequence[tuple[str, bytes]]) -> list[tuple[str, list[bytes]]]:
    groups: list[tuple[str, list[bytes]]] = []
    for step, data in frames:
        if groups and groups[-1][0] == step:
            groups[-1][1].append(data)
        else:
            groups.append((step, [data]))
    return groups


def _validate_challenge(challenge: Sequence[str]) -> None:
    if not challenge or any(step not in CHALLENGE_STEPS for step in challenge):
        raise ValueError(f"a challenge is a non-empty list of {CHALLENGE_STEPS}")
    if any(a == b for a, b in zip(challenge, challenge[1:])):
        raise ValueError("a challenge never repeats a step twice in a row")
    if challenge[-1] != "center":
        raise ValueError('a challenge ends with "center", the frontal frame')


# frontal_frame usually follows check_liveness on the same frames: remember each frame's pose
# (two numbers, no pixels) by digest so the frames are not analysed twice.
_POSE_CACHE_SIZE = 256
_pose_cache: OrderedDict[bytes, _Pose | None] = OrderedDict()
_pose_cache_lock = threading.Lock()


def _remember_pose(digest: bytes, pose: _Pose | None) -> None:
    with _pose_cache_lock:
        _pose_cache[digest] = pose
        _pose_cache.move_to_end(digest)
        while len(_pose_cache) > _POSE_CACHE_SIZE:
            _pose_cache.popitem(last=False)


def _pose(data: bytes) -> _Pose | None:
    digest = hashlib.sha256(data).digest()
    with _pose_cache_lock:
        if digest in _pose_cache:
            return _pose_cache[digest]
    frame = _analyse(data)
    if frame.face is None or frame.several_faces:
        return None
    return _Pose(yaw=frame.yaw, area=frame.face.area)
