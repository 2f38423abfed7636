"""Within one analysis the selfie checks share the face detections and the age network's readings (checks.faces,
kept for the span of checks.images.decoded_once): the shared path must decide exactly as the checks do alone.

The reference is each check working on its own, outside decoded_once: every frame decoded, detected and read by
each check that needs it, as before the sharing existed.
"""

import io

import numpy as np
import pytest
from PIL import Image

import checks.faces
from checks.age import estimate_age
from checks.face_match import live_descriptor
from checks.faces import face_engine
from checks.images import decoded_once, open_image
from checks.liveness import Capture, check_liveness, frontal_frames
from tests.support.pad import capture_make


def _selfie_checks(frames, challenge, record):
    """What sessions_api.analysis runs on a selfie: liveness, the age of the frontal frames, and the live face
    (which the document step compares with the portrait when the face was not enough)."""
    liveness = check_liveness(frames, challenge, record)
    frontal = frontal_frames(frames, challenge)
    age = estimate_age(frontal)
    live = live_descriptor(frontal)
    return liveness, age, (tuple(live.values), live.age)


def _record(capture: dict) -> Capture:
    flash = tuple(capture["flash"])
    return Capture(capture["camera"], tuple(capture["times"]), tuple(capture["durations"]), flash=flash, shown=flash)


def _enlarged(frames, side: int):
    """The frames scaled up to side x side: liveness (640) and the age estimate (800) then detect at other sizes."""
    enlarged = []
    for step, data in frames:
        picture = Image.open(io.BytesIO(data)).convert("RGB").resize((side, side), Image.Resampling.BILINEAR)
        buffer = io.BytesIO()
        picture.save(buffer, format="JPEG", quality=90)
        enlarged.append((step, buffer.getvalue()))
    return enlarged


def _detections_counted(monkeypatch) -> list[int]:
    counted = [0]
    analysed = checks.faces._analysis_pixels

    def counting(image, *, max_side):
        counted[0] += 1
        return analysed(image, max_side=max_side)

    monkeypatch.setattr(checks.faces, "_analysis_pixels", counting)
    return counted


@pytest.mark.parametrize("side", [480, 900])
def test_selfie_checks_in_one_analysis_decide_as_each_check_alone(monkeypatch, side):
    capture = capture_make("genuine", seed=1)
    frames = capture["frames"] if side == 480 else _enlarged(capture["frames"], side)
    counted = _detections_counted(monkeypatch)

    alone = _selfie_checks(frames, capture["challenge"], _record(capture))
    detections_alone = counted[0]
    with decoded_once():
        shared = _selfie_checks(frames, capture["challenge"], _record(capture))
    detections_shared = counted[0] - detections_alone

    assert alone[0].is_live
    assert shared == alone  # the liveness result, the age reading and the live face, to the last bit
    frontal = len(frontal_frames(frames, capture["challenge"]))
    if side == 480:  # every check detects at the frame's own size: the frontal frames are detected once
        assert detections_shared == detections_alone - 2 * frontal
    else:  # liveness detects at 640, the age estimate and the live face at 800: only those two share
        assert detections_shared == detections_alone - frontal


def test_a_face_is_read_the_same_alone_and_in_a_batch():
    capture = capture_make("genuine", seed=1)
    engine = face_engine()
    faces = [
        engine.faces(open_image(data), description_inputs=True)[0]
        for step, data in capture["frames"]
        if step == "center"
    ]
    ages, features = engine.ages_and_features([face.age_input for face in faces])
    description_features, description_ages = engine.descriptions([face.description_input for face in faces])
    for index, face in enumerate(faces):
        age, feature = engine.ages_and_features([face.age_input])
        assert age[0] == ages[index]
        assert np.array_equal(feature[0], features[index])
        description_feature, description_age = engine.descriptions([face.description_input])
        assert description_age[0] == description_ages[index]
        assert np.array_equal(description_feature[0], description_features[index])
