"""The colour-flash challenge (checks.flash), alone and inside checks.liveness, on synthetic captures."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
from PIL import Image

from checks.flash import FLASH_COLOURS, flash_score, flash_sequence_new
from checks.liveness import Capture, check_liveness
from tests.support import pad
from tests.support.pad import capture_make, reflect


def _record(capture: dict, *, shown=None) -> Capture:
    flash = tuple(capture["flash"])
    return Capture(
        capture["camera"],
        tuple(capture["times"]),
        tuple(capture["durations"]),
        flash=flash,
        shown=flash if shown is None else tuple(shown),
    )


@pytest.fixture(scope="module")
def genuine():
    return capture_make("genuine", seed=5)


def test_issued_sequences_never_repeat_a_colour_and_show_each_at_least_twice():
    drawn = [flash_sequence_new(12) for _ in range(200)]

    assert all(len(s) == 12 and all(a != b for a, b in zip(s, s[1:])) for s in drawn)
    assert all(s.count(colour) >= 2 for s in drawn for colour in FLASH_COLOURS)
    assert len({tuple(s) for s in drawn}) > 190  # about 6,000 possible: a recording cannot guess one


def test_skin_that_follows_the_colours_scores_near_one_and_the_wrong_colours_below_zero():
    rng = np.random.default_rng(1)
    steps = [str(i // 3) for i in range(12)]
    shown = flash_sequence_new(12)
    base = np.array([180.0, 130.0, 110.0])
    skins = []
    for colour in shown:
        skin = base * (1 + rng.normal(0, 0.003, 3))
        skin[FLASH_COLOURS[colour][1]] *= 1.03
        skins.append(skin)
    wrong = {"red": "green", "green": "blue", "blue": "red"}

    assert flash_score(steps, shown, skins) > 0.8
    assert flash_score(steps, [wrong[c] for c in shown], skins) < 0
    assert flash_score(steps, shown, [base] * 12) == 0.0  # nothing changes: nothing followed


def test_a_genuine_capture_reflecting_the_issued_colours_passes(genuine):
    result = check_liveness(genuine["frames"], genuine["challenge"], _record(genuine))

    assert result.is_live and result.signals == ()


def test_a_capture_recorded_before_the_sequence_existed_is_refused(genuine):
    # The same person and timing, but the frames reflect another sequence (a recording made earlier).
    other = capture_make("genuine", seed=6)
    replayed = dict(genuine, flash=other["flash"])
    if replayed["flash"] == genuine["flash"]:  # pragma: no cover - 1 in thousands
        pytest.skip("the two seeded sequences happen to be equal")

    result = check_liveness(genuine["frames"], genuine["challenge"], _record(replayed))

    assert result == type(result)(is_live=False, liveness_score=0.0, signals=("flash",))


def test_an_untinted_capture_is_refused():
    capture = capture_make("virtual_camera", seed=5)  # synthetic turns, no reflection; only its label differs
    capture["camera"] = "Integrated Camera"

    result = check_liveness(capture["frames"], capture["challenge"], _record(capture))

    assert not result.is_live and result.signals == ("flash",)


def test_a_page_reporting_other_colours_than_the_issued_ones_is_refused(genuine):
    shown = list(genuine["flash"])
    shown[0] = next(colour for colour in FLASH_COLOURS if colour not in (shown[0], shown[1]))

    result = check_liveness(genuine["frames"], genuine["challenge"], _record(genuine, shown=shown))

    assert not result.is_live and result.signals == ("flash",)


def test_the_flash_signal_flagged_only_is_reported_without_refusing():
    capture = capture_make("virtual_camera", seed=5)
    capture["camera"] = "Integrated Camera"

    result = check_liveness(capture["frames"], capture["challenge"], _record(capture), flag_only=frozenset({"flash"}))

    assert result.is_live and result.signals == ("flash",)


def test_the_modelled_reflection_raises_the_colours_channel_only(monkeypatch):
    monkeypatch.setattr(pad, "EXPOSURE_JITTER", 0.0)
    monkeypatch.setattr(pad, "BALANCE_JITTER", 0.0)
    frame = capture_make("virtual_camera", seed=5)["frames"][0][1]

    after = reflect(frame, "green", 0.05, random.Random(0))

    ratio = _mean_rgb(after) / _mean_rgb(frame)
    assert ratio[1] == pytest.approx(1.05, abs=0.01) and ratio[0] == pytest.approx(1.0, abs=0.01)


def _mean_rgb(jpeg: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(jpeg)).convert("RGB"), float).mean(axis=(0, 1))
