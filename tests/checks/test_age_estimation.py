"""checks.age: the confidence formula, and the real network on real photos."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PIL import Image
from skimage import data

from checks import faces
from checks.age import AGE_ERROR_SD, confidence_at_least, estimate_age
from checks.results import AgeEstimation, Retake
from tests.checks.conftest import jpeg


# The research faces sit beside the checkout (../shared); worktrees one level down use /work/shared.
FACES_DEV = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "faces-dev"
if not FACES_DEV.is_dir():
    FACES_DEV = Path("/work/shared/data/faces-dev")


def _labelled_face(age: int) -> bytes:
    """One labelled research face of that age (read from ../shared, never copied into the repo)."""
    return sorted(FACES_DEV.glob(f"{age}_*.jpg"))[0].read_bytes()


def test_confidence_is_one_half_at_the_threshold_and_grows_with_the_estimate():
    assert confidence_at_least(23.0, 23) == pytest.approx(0.5)
    assert confidence_at_least(23.0 + AGE_ERROR_SD, 23) == pytest.approx(0.8413, abs=1e-4)
    assert confidence_at_least(10.0, 23) < 0.01
    assert confidence_at_least(60.0, 23) == pytest.approx(1.0)


def test_adult_astronaut_gets_an_adult_age_estimate(astronaut_jpeg):
    result = estimate_age(astronaut_jpeg, threshold_age=23)

    assert isinstance(result, AgeEstimation)
    assert 25 <= result.estimated_age <= 55
    assert 0.5 < result.age_confidence <= 1.0


def test_child_face_gets_a_young_age_estimate():
    result = estimate_age(_labelled_face(6), threshold_age=23)

    assert isinstance(result, AgeEstimation)
    assert result.estimated_age < 13
    assert result.age_confidence < 0.05


def test_several_frames_give_the_median_of_the_frames_with_one_face(astronaut_jpeg, cat_jpeg):
    child, adult = _labelled_face(6), astronaut_jpeg
    single = {frame: estimate_age(frame, threshold_age=23).estimated_age for frame in (child, adult)}

    result = estimate_age([adult, cat_jpeg, adult, child], threshold_age=23)

    assert result.estimated_age == pytest.approx(single[adult])  # median of adult, adult, child
    assert estimate_age([adult, child], threshold_age=23).estimated_age == pytest.approx(
        (single[adult] + single[child]) / 2
    )


def test_frames_without_any_usable_face_ask_for_a_retake(cat_jpeg):
    result = estimate_age([cat_jpeg, b"not an image"], threshold_age=23)

    assert result == Retake("We could not find a face. Face the camera in good light.")


def test_higher_threshold_never_raises_the_confidence(astronaut_jpeg):
    low = estimate_age(astronaut_jpeg, threshold_age=15)
    high = estimate_age(astronaut_jpeg, threshold_age=60)

    assert low.age_confidence >= high.age_confidence
    assert low.estimated_age == high.estimated_age


def test_cat_photo_asks_for_a_retake(cat_jpeg):
    result = estimate_age(cat_jpeg, threshold_age=23)

    assert result == Retake("We could not find a face. Face the camera in good light.")


def test_truncated_jpeg_asks_for_a_retake(astronaut_jpeg):
    result = estimate_age(astronaut_jpeg[:5000], threshold_age=23)

    assert isinstance(result, Retake)
    assert "damaged or incomplete" in result.message


def test_corrupt_jpeg_asks_for_a_retake(astronaut_jpeg):
    corrupt = astronaut_jpeg[:20] + bytes(len(astronaut_jpeg) - 20)

    assert isinstance(estimate_age(corrupt, threshold_age=23), Retake)


def test_non_image_asks_for_a_retake():
    assert isinstance(estimate_age(b"<html>not a selfie</html>", threshold_age=23), Retake)


def test_two_faces_of_similar_size_ask_for_a_retake():
    face = Image.fromarray(data.astronaut()).crop((120, 20, 330, 260))
    pair = Image.new("RGB", (face.width * 2, face.height))
    pair.paste(face, (0, 0))
    pair.paste(face, (face.width, 0))

    result = estimate_age(jpeg(pair), threshold_age=23)

    assert isinstance(result, Retake)
    assert "more than one face" in result.message


def test_small_face_in_the_background_is_ignored():
    face = Image.fromarray(data.astronaut()).crop((120, 20, 330, 260))
    scene = Image.new("RGB", (face.width * 3, face.height * 2), (90, 90, 90))
    scene.paste(face.resize((face.width * 2, face.height * 2)), (0, 0))
    scene.paste(face, (face.width * 2, face.height))

    assert isinstance(estimate_age(jpeg(scene), threshold_age=23), AgeEstimation)


def test_model_is_loaded_once_per_process_even_under_concurrent_first_use(monkeypatch):
    monkeypatch.setattr(faces, "_engine", None)
    built = []
    original = faces.FaceEngine.__init__

    def counting_init(self):
        built.append(self)
        original(self)

    monkeypatch.setattr(faces.FaceEngine, "__init__", counting_init)
    engines = []
    threads = [threading.Thread(target=lambda: engines.append(faces.face_engine())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(built) == 1
    assert all(engine is engines[0] for engine in engines)
