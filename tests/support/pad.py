"""Synthetic capture sets in the format of docs/pad.md, made from the test portraits (tests.support.faces).

Regression material only: synthetic attacks teach a detector its own artefacts, so these sets show that
the checks refuse what they were built to refuse, never how well they do on real attacks.
Each capture follows the page: the server's random step durations, three frames per step from 1 s after
the step starts to 150 ms before it ends (static/flow/selfie.js), at the times a real page would take them.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import numpy as np
from PIL import Image

from checks.flash import FLASH_COLOURS
from checks.liveness import STEP_MS
from tests.support.faces import challenge_frames, encode, still_frames

FRAMES_PER_STEP = 3
# The moves checks.liveness.challenge_new can issue before the final "center".
CHALLENGES = [
    ("left", "right", "left"),
    ("left", "center", "left"),
    ("left", "center", "right"),
    ("right", "left", "right"),
    ("right", "center", "right"),
    ("right", "center", "left"),
]
GRACE_MS, END_MARGIN_MS = 1000, 150
# The modelled reflection of the screen's colour on a face (checks.flash), for synthetic genuine captures: the
# colour's channel gains REFLECTION (a fraction, drawn per capture) over the whole frame, and each frame's
# exposure and white balance wander by EXPOSURE_JITTER and BALANCE_JITTER (standard deviations), as an
# automatic camera's do. Assumptions, not measurements: real reflections await the recording kit (docs/pad.md).
REFLECTION = (0.02, 0.06)
EXPOSURE_JITTER = 0.03
BALANCE_JITTER = 0.01
ATTACKS = (
    "still_image",
    "looped_clip",
    "fixed_order_replay",
    "virtual_camera",
    "tilted_print",
    "script_injection",  # follows the page: the residual risk, expected to pass
)


def page_times(durations: list[int]) -> list[int]:
    """When the page takes each frame (ms since Start), step by step."""
    times, start = [], 0
    for duration in durations:
        span = duration - GRACE_MS - END_MARGIN_MS
        times += [start + GRACE_MS + round(span * i / (FRAMES_PER_STEP - 1)) for i in range(FRAMES_PER_STEP)]
        start += duration
    return times


def reflect(jpeg: bytes, colour: str, strength: float, rng: random.Random) -> bytes:
    """The frame as a camera would see it lit by the screen's `colour` (see REFLECTION)."""
    pixels = np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"), dtype=np.float64)
    gain = np.array([1.0 + rng.gauss(0, BALANCE_JITTER) for _ in range(3)]) * (1.0 + rng.gauss(0, EXPOSURE_JITTER))
    gain[FLASH_COLOURS[colour][1]] *= 1.0 + strength
    return encode(Image.fromarray(np.clip(pixels * gain, 0, 255).astype(np.uint8)))


def capture_make(kind: str, seed: int) -> dict:
    """One capture of `kind` ("genuine" or an attack of ATTACKS).

    Every capture is issued a colour sequence (checks.flash); genuine captures and the script injection
    (which can read the page's colour as well as its instruction) reflect it, the other attacks were
    recorded before it existed and do not."""
    rng = random.Random(seed)  # the same capture for the same seed: challenge, timing, frames
    challenge = [*rng.choice(CHALLENGES), "center"]
    durations = [rng.randrange(STEP_MS[0], STEP_MS[1] + 1, 100) for _ in challenge]
    times = page_times(durations)
    steps = [step for step in challenge for _ in range(FRAMES_PER_STEP)]
    camera = "Integrated Camera"
    if kind in ("genuine", "script_injection", "virtual_camera", "tilted_print"):
        frames = challenge_frames(challenge, frames_per_step=FRAMES_PER_STEP, seed=seed, flat=kind == "tilted_print")
        pictures = [data for _, data in frames]
        camera = "OBS Virtual Camera" if kind == "virtual_camera" else camera
    elif kind == "still_image":
        pictures = [data for _, data in still_frames(challenge, frames_per_step=FRAMES_PER_STEP)]
    elif kind == "looped_clip":  # a 2-second clip (left, centre, right, centre) at 4 frames a second, looped
        clip = [data for _, data in challenge_frames(["left", "center", "right", "center"], frames_per_step=2)]
        offset = rng.randrange(len(clip))
        pictures = [clip[(offset + t // 250) % len(clip)] for t in times]
    elif kind == "fixed_order_replay":  # a recording in the issued order, one pose every 2 s
        per_step = 2 * FRAMES_PER_STEP  # a video: no recorded frame is taken twice
        recorded = challenge_frames(challenge, frames_per_step=per_step, seed=seed)
        pictures, used = [], [0] * len(challenge)
        for t in times:
            step = min(t // 2000, len(challenge) - 1)
            pictures.append(recorded[step * per_step + min(used[step], per_step - 1)][1])
            used[step] += 1
    else:
        raise ValueError(f"unknown kind {kind}")
    flash = _flash_sequence(len(steps), random.Random(seed + 7))
    if kind in ("genuine", "script_injection"):
        strength = rng.uniform(*REFLECTION)
        pictures = [reflect(data, colour, strength, rng) for data, colour in zip(pictures, flash)]
    return {
        "kind": "genuine" if kind == "genuine" else "attack",
        "attack": None if kind == "genuine" else kind,
        "challenge": challenge,
        "durations": durations,
        "camera": camera,
        "times": times,
        "flash": flash,
        "frames": list(zip(steps, pictures)),
    }


def _flash_sequence(count: int, rng: random.Random) -> list[str]:
    """Seeded, but shaped like checks.flash.flash_sequence_new's: never the same colour twice in a row."""
    names = list(FLASH_COLOURS)
    sequence = [rng.choice(names)]
    while len(sequence) < count:
        sequence.append(rng.choice([name for name in names if name != sequence[-1]]))
    return sequence


def capture_write(directory: Path, name: str, capture: dict) -> Path:
    folder = Path(directory) / name
    folder.mkdir(parents=True)
    files = []
    for index, (step, data) in enumerate(capture["frames"]):
        file = f"{index:03d}-{step}.jpg"
        (folder / file).write_bytes(data)
        files.append([step, file])
    record = {key: value for key, value in capture.items() if key != "frames" and value is not None}
    record.update(frames=files, consent="synthetic")
    (folder / "capture.json").write_text(json.dumps(record, indent=1))
    return folder


def synthetic_set(directory: Path, *, per_type: int, kinds: tuple[str, ...] = ("genuine", *ATTACKS)) -> Path:
    for kind in kinds:
        for index in range(per_type):
            capture_write(directory, f"{kind}-{index:03d}", capture_make(kind, seed=1000 * index + len(kind)))
    return directory
