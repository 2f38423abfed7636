"""The passive veto (checks.passive): its vendored models, their preprocessing, and their place in checks.liveness."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from checks import liveness, passive
from checks.liveness import check_liveness
from checks.passive import MODELS, MODELS_DIR, crop_face, resize_linear
from tests.support.faces import challenge_frames
from tests.support.research_data import research_data_dir


@pytest.mark.parametrize(("name", "scale", "sha256"), MODELS)
def test_the_vendored_model_files_are_the_recorded_ones(name, scale, sha256):
    data = (MODELS_DIR / name).read_bytes()

    assert hashlib.sha256(data).hexdigest() == sha256
    source = (MODELS_DIR / "SOURCE.md").read_text()
    assert re.search(rf"\| {re.escape(name)} \| {sha256} \| {len(data)} \|", source)


def test_the_vendored_models_carry_their_licence_and_source():
    source = (MODELS_DIR / "SOURCE.md").read_text()

    assert "Apache License" in (MODELS_DIR / "LICENSE").read_text()
    assert "c175efef505bc275f7835cc9aa2aecab305ac184" in source and "yakhyo/face-anti-spoofing" in source


def test_the_crop_follows_upstream_scaled_about_the_face_and_kept_inside_the_picture():
    pixels = np.zeros((400, 600, 3), np.uint8)
    pixels[150:250, 250:350] = 255  # the face box, white
    near = crop_face(pixels, (250, 150, 100, 100), 1.0)
    wide = crop_face(pixels, (250, 150, 100, 100), 2.7)
    clipped = crop_face(pixels, (250, 150, 100, 100), 10.0)  # wider than the picture: as wide as it allows

    assert near.shape == wide.shape == (80, 80, 3)
    assert near.mean() > 245 and 30 < wide.mean() < 45  # (1/2.7)^2 of the crop is the white box
    assert 15 < clipped.mean() < 30


def test_the_resize_samples_like_opencv_without_averaging():
    stripes = np.zeros((160, 160, 3), np.uint8)
    stripes[:, ::2] = 255  # one-pixel stripes: OpenCV's linear rule samples them, an averaging filter greys them

    assert set(np.unique(resize_linear(stripes, 80, 80))) <= {127, 128}
    assert resize_linear(stripes, 160, 160).tolist() == stripes.tolist()


def test_a_frontal_frame_the_models_take_for_a_spoof_is_refused_as_passive(monkeypatch):
    frames = challenge_frames(["left", "center", "right", "center"])
    monkeypatch.setattr(liveness, "PASSIVE_THRESHOLD", 1.01)  # every face under it: the veto must fire

    refused = check_liveness(frames, ["left", "center", "right", "center"])
    flagged = check_liveness(frames, ["left", "center", "right", "center"], flag_only=frozenset({"passive"}))

    assert not refused.is_live and refused.signals == ("passive",)
    assert flagged.is_live and flagged.signals == ("passive",)


@pytest.mark.research_data("faces-dev")
def test_bona_fide_face_photos_mostly_pass_the_veto():
    from checks.faces import dominant_face, face_engine
    from checks.images import open_image

    photos = sorted((research_data_dir() / "faces-dev").glob("*.jpg"))[::250][:20]
    scores = []
    for photo in photos:
        picture = open_image(photo.read_bytes())
        face, _ = dominant_face(face_engine().faces(picture))
        if face is not None:
            scale = picture.width / face.image_size[0]
            box = tuple(v * scale for v in face.box)
            scores.append(passive.passive_models().real_probability(picture, box))

    assert len(scores) >= 15
    assert sum(score >= passive.PASSIVE_THRESHOLD for score in scores) >= 0.8 * len(scores)
