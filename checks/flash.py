"""The colour-flash challenge: the face must reflect the server's random sequence of screen colours (docs/pad.md).

The server issues one colour per frame (`flash_sequence_new`); during the capture the page fills the screen
with the frame's colour before taking it, and its capture record says which colour it showed. A face in
front of the screen reflects it: its skin turns a little redder under red, greener under green. A recording,
a replay or a face-swap prepared before this sequence existed does not follow it.

The check works on the skin of the aligned face chip (checks.faces: cheeks and nose, below the eyes), per
frame, as a relative change: the log colour of the skin minus its own grey level (its chromaticity), taken
relative to the mean of the frames of the same step (same pose, same light, so turning the head does not
count), is correlated with the colours shown, taken relative to the step's mean in the same way. A face
that follows the sequence scores near 1, frames that ignore it near 0 (a tint of the wrong colours scores
below 0). FLASH_MIN_SCORE is the score `manage.py calibrate_pad flash DIR` prints for a BPCER of at most
5 % on genuine captures.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

import numpy as np

# The screen colours (CSS) and the channel of the camera's RGB each one raises on the skin.
FLASH_COLOURS = {"red": ("#ff0000", 0), "green": ("#00ff00", 1), "blue": ("#0000ff", 2)}
FLASH_FRAMES_PER_STEP = 3  # the page's frames per step (static/flow/selfie.js)
# The correlation under which the skin does not follow the sequence: what `manage.py calibrate_pad flash DIR`
# printed for a BPCER of at most 5 % on the synthetic genuine captures of `bench/pad.py --flash 68` (a modelled
# reflection, tests.support.pad.REFLECTION: recalibrate on real captures from tools/pad-recorder).
FLASH_MIN_SCORE = 0.761
MIN_FLASH_FRAMES = 6  # fewer frames with a face: not enough to judge, the check fails


def flash_sequence_new(frames: int) -> list[str]:
    """A random colour per frame, never the same twice in a row, each colour at least twice when `frames`
    allows: about 3 x 2^(frames-1) sequences (12 frames: 6,144), so a prepared recording cannot guess it."""
    names = list(FLASH_COLOURS)
    while True:
        sequence = [secrets.choice(names)]
        while len(sequence) < frames:
            sequence.append(secrets.choice([name for name in names if name != sequence[-1]]))
        if frames < 2 * len(names) or all(sequence.count(name) >= 2 for name in names):
            return sequence


def skin_colour(chip: np.ndarray) -> np.ndarray:
    """The mean RGB of the skin below the eyes (cheeks and nose) of a 64x64 aligned face chip."""
    return np.asarray(chip, dtype=np.float64)[22:34, 14:50].reshape(-1, 3).mean(axis=0)


def flash_score(steps: Sequence[str], shown: Sequence[str], skins: Sequence[np.ndarray | None]) -> float:
    """How well the skin's colour follows the colours shown, frame by frame (-1..1; 1: exactly).

    `steps`, `shown` and `skins` are per frame, in capture order (a skin is None where no face was found).
    """
    rows = [(step, colour, skin) for step, colour, skin in zip(steps, shown, skins) if skin is not None]
    if len(rows) < MIN_FLASH_FRAMES or any(colour not in FLASH_COLOURS for _, colour, _ in rows):
        return 0.0
    observed = np.log(np.array([skin for _, _, skin in rows]) + 1.0)
    observed -= observed.mean(axis=1, keepdims=True)  # chromaticity: the grey level (exposure) drops out
    expected = np.zeros_like(observed)
    for index, (_, colour, _) in enumerate(rows):
        expected[index, FLASH_COLOURS[colour][1]] = 1.0
    expected -= expected.mean(axis=1, keepdims=True)
    labels = np.array([step for step, _, _ in rows])
    for step in set(labels):  # relative to the frames of the same step: the pose and its light drop out
        same = labels == step
        observed[same] -= observed[same].mean(axis=0)
        expected[same] -= expected[same].mean(axis=0)
    norm = float(np.sqrt((observed**2).sum() * (expected**2).sum()))
    return float((observed * expected).sum() / norm) if norm > 0 else 0.0
