"""checks.liveness on synthetic head turns made from a real face (tests/support/faces.py)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from PIL import Image
from skimage import data

from checks import liveness
from checks.head_pose import head_yaw
from checks.liveness import (
    CHALLENGE_STEPS,
    Capture,
    challenge_durations,
    challenge_new,
    check_liveness,
    frontal_frame,
    frontal_frames,
)
from checks.results import Liveness, Retake
from tests.support.faces import add_noise, astronaut_portrait, challenge_frames, encode, still_frames
from tests.support.pad import page_times

CHALLENGE = ["left", "center", "right", "center"]
OTHER_ORDER = ["right", "center", "left", "center"]


@pytest.fixture(scope="module")
def live_frames():
    return challenge_frames(CHALLENGE)


@pytest.fixture(scope="module")
def other_order_frames():
    return challenge_frames(OTHER_ORDER, seed=11)


def test_challenge_has_three_moves_then_center_and_never_repeats_a_step():
    for _ in range(200):
        challenge = challenge_new()

        assert len(challenge) == 4
        assert challenge[0] in ("left", "right")
        assert challenge[-1] == "center"
        assert set(challenge) <= set(CHALLENGE_STEPS)
        assert all(a != b for a, b in zip(challenge, challenge[1:]))


def test_challenges_are_unpredictable():
    assert len({tuple(challenge_new()) for _ in range(200)}) == 6


def test_head_yaw_is_positive_when_the_nose_moves_towards_the_image_right():
    # Outer and inner corner of the eye on the image's right, then the left one, then the nose.
    frontal = np.array([[260, 100], [240, 100], [200, 100], [220, 100], [230, 135]], dtype=float)
    turned = frontal.copy()
    turned[4, 0] += 10

    assert head_yaw(frontal) == pytest.approx(0.0)
    assert head_yaw(turned) == pytest.approx(10 / 60)
    mirrored = turned.copy()
    mirrored[:, 0] = 460 - mirrored[:, 0]
    assert head_yaw(mirrored[[2, 3, 0, 1, 4]]) == pytest.approx(-10 / 60)


def test_head_turns_following_the_challenge_pass(live_frames):
    result = check_liveness(live_frames, CHALLENGE)

    assert isinstance(result, Liveness)
    assert result.is_live
    assert 0.5 <= result.liveness_score <= 1.0


def test_another_challenge_order_also_passes(other_order_frames):
    result = check_liveness(other_order_frames, OTHER_ORDER)

    assert result.is_live


def test_the_same_still_frame_repeated_for_every_step_fails():
    result = check_liveness(still_frames(CHALLENGE), CHALLENGE)

    assert result == Liveness(is_live=False, liveness_score=0.0, signals=("replay",))


def test_head_turns_in_another_order_than_the_challenge_fail(other_order_frames):
    # A recording of a previous session, relabelled with the steps of the new challenge.
    relabelled = [
        (step, data) for (step, _), (_, data) in zip(_labels_like(other_order_frames, CHALLENGE), other_order_frames)
    ]

    result = check_liveness(relabelled, CHALLENGE)

    assert isinstance(result, Liveness)
    assert not result.is_live
    assert result.liveness_score < 0.5


def test_frames_labelled_in_another_order_than_the_challenge_fail(other_order_frames):
    result = check_liveness(other_order_frames, CHALLENGE)

    assert result == Liveness(is_live=False, liveness_score=0.0)


def test_a_flat_photo_tilted_left_and_right_fails():
    result = check_liveness(challenge_frames(CHALLENGE, flat=True, frames_per_step=2), CHALLENGE)

    assert isinstance(result, Liveness)
    assert not result.is_live


def test_someone_else_photo_for_the_final_frontal_frames_fails(live_frames):
    # The turns are done live, then another person's photo is held up for the frontal frames.
    portrait, _ = astronaut_portrait()
    other_person = Image.fromarray((data.lfw_subset()[60] * 255).astype(np.uint8)).convert("RGB")
    impostor = portrait.copy()
    impostor.paste(other_person.resize((200, 200), Image.Resampling.BICUBIC), (140, 140))
    frames = live_frames[:-3] + [("center", encode(add_noise(impostor, seed))) for seed in range(3)]

    result = check_liveness(frames, CHALLENGE)

    assert isinstance(result, Liveness)
    assert not result.is_live


def test_frames_without_a_face_ask_for_a_retake(cat_jpeg):
    frames = [(step, cat_jpeg) for step in CHALLENGE for _ in range(2)]

    result = check_liveness(frames, CHALLENGE)

    assert isinstance(result, Retake)
    assert "could not see your face" in result.message


def test_no_frames_ask_for_a_retake():
    assert isinstance(check_liveness([], CHALLENGE), Retake)


def test_a_challenge_outside_the_vocabulary_is_a_programming_error(live_frames):
    with pytest.raises(ValueError):
        check_liveness(live_frames, ["up", "center"])
    with pytest.raises(ValueError):
        check_liveness(live_frames, ["left", "right"])


def test_frontal_frame_is_the_most_frontal_center_frame(live_frames):
    check_liveness(live_frames, CHALLENGE)

    chosen = frontal_frame(live_frames, CHALLENGE)

    assert chosen in [data for step, data in live_frames if step == "center"]
    first_center_frame = next(data for step, data in live_frames if step == "center")
    assert chosen != first_center_frame  # still turning back from the left when it was taken


def test_frontal_frames_for_the_age_estimate_are_center_frames_most_frontal_first(live_frames):
    check_liveness(live_frames, CHALLENGE)

    chosen = frontal_frames(live_frames, CHALLENGE, count=3)

    center_frames = [data for step, data in live_frames if step == "center"]
    assert 1 <= len(chosen) <= 3
    assert len(set(chosen)) == len(chosen)
    assert all(frame in center_frames for frame in chosen)
    assert chosen[0] == frontal_frame(live_frames, CHALLENGE)
    yaws = [abs(liveness._pose(frame).yaw) for frame in chosen]
    assert all(yaw <= liveness.CENTER_YAW for yaw in yaws[1:])
    assert yaws == sorted(yaws, key=lambda yaw: round(yaw, 2))


def test_frontal_frame_works_without_a_prior_liveness_check(live_frames, monkeypatch):
    monkeypatch.setattr(liveness, "_pose_cache", OrderedDict())

    chosen = frontal_frame(live_frames, CHALLENGE)

    assert chosen in [data for step, data in live_frames if step == "center"]


def _labels_like(frames, challenge):
    """Labels of challenge laid over frames, the same number of frames per step."""
    per_step = len(frames) // len(challenge)
    return [(step, None) for step in challenge for _ in range(per_step)]


# --- the capture record: the camera's label, the frame times the page saw, the issued step durations ---

DURATIONS = (2600, 3400, 2400, 3000)


def _capture(frames, *, label="Integrated Camera", times=None, durations=DURATIONS):
    return Capture(label, tuple(times if times is not None else page_times(list(durations))), tuple(durations))


def test_issued_step_durations_are_random_within_their_range():
    drawn = {tuple(challenge_durations(CHALLENGE)) for _ in range(50)}

    assert len(drawn) > 40
    assert all(liveness.STEP_MS[0] <= ms <= liveness.STEP_MS[1] and ms % 100 == 0 for row in drawn for ms in row)


def test_a_genuine_capture_that_follows_the_issued_timing_passes(live_frames):
    result = check_liveness(live_frames, CHALLENGE, _capture(live_frames))

    assert result.is_live and result.signals == ()


@pytest.mark.parametrize("label", ["OBS Virtual Camera", "ManyCam Virtual Webcam", "Snap Camera", "XSplit VCam"])
def test_a_virtual_camera_is_refused_and_named(live_frames, label):
    result = check_liveness(live_frames, CHALLENGE, _capture(live_frames, label=label))

    assert result == Liveness(is_live=False, liveness_score=0.0, signals=("virtualCamera",))


def test_a_signal_flagged_only_is_reported_without_refusing(live_frames):
    capture = _capture(live_frames, label="OBS Virtual Camera")

    result = check_liveness(live_frames, CHALLENGE, capture, flag_only=frozenset({"virtualCamera"}))

    assert result.is_live and result.signals == ("virtualCamera",)


def test_frames_outside_their_steps_issued_window_are_refused(live_frames):
    # The same frames, taken as if every step lasted 2 s: the last steps' frames fall outside their windows.
    early = page_times([2000] * 4)

    result = check_liveness(live_frames, CHALLENGE, _capture(live_frames, times=early))

    assert not result.is_live and result.signals == ("timing",)


@pytest.mark.parametrize(
    "change",
    [
        lambda t: [t[0], *[x - 2000 for x in t[1:]]],  # time goes backwards
        lambda t: [t[0] + i * 30 for i in range(len(t))],  # 33 frames a second: not the page's pace
        lambda t: t[:-1],  # a frame without a time
    ],
)
def test_implausible_frame_times_are_refused(live_frames, change):
    result = check_liveness(live_frames, CHALLENGE, _capture(live_frames, times=change(page_times(list(DURATIONS)))))

    assert not result.is_live and "timing" in result.signals


def test_a_frame_repeated_later_in_the_session_is_a_replay(live_frames):
    replayed = list(live_frames)
    replayed[-1] = ("center", live_frames[4][1])  # step 2's centre frame again at the end

    result = check_liveness(replayed, CHALLENGE, _capture(replayed))

    assert not result.is_live and "replay" in result.signals


def test_a_turn_step_must_hold_its_pose_in_every_frame_under_timing(live_frames):
    # The first "left" frame shows the face still frontal: fine without a capture record (best frame
    # counts), refused with one (frames come after the grace time, the head should be turned by then).
    frontal = challenge_frames(["center"], frames_per_step=1, seed=99)[0][1]
    late = [("left", frontal), *live_frames[1:]]

    assert check_liveness(late, CHALLENGE).is_live
    assert check_liveness(late, CHALLENGE, _capture(late)).signals == ("timing",)
