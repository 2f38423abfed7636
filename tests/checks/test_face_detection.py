"""checks.faces: HOG run from the third pyramid level gives the whole run's faces, or the whole run is made.

dlib's detector on the whole picture is the other side: whatever way the engine takes, the faces a check reads
(dominant_face: the dominant face's box and score, and whether a rival shows) must be the ones dlib finds
scanning every level."""

from __future__ import annotations

import random

import numpy as np
import pytest
from PIL import Image

from checks.faces import COMPARABLE_FACE_AREA, CONFIDENT_FACE_SCORE, _analysis_pixels, dominant_face, face_engine
from checks.images import open_image
from tests.support.faces import astronaut_portrait, challenge_frames
from tests.support.research_data import research_data_dir


class _Counting:
    """The engine's HOG detector, counting the sizes it is run on."""

    def __init__(self, detector) -> None:
        self.detector, self.sizes = detector, []

    def run(self, pixels, upsample, threshold):
        self.sizes.append(pixels.shape[:2])
        return self.detector.run(pixels, upsample, threshold)


@pytest.fixture
def counted(monkeypatch):
    frontend = face_engine()._frontend
    counting = _Counting(frontend._detector)
    monkeypatch.setattr(frontend, "_detector", counting)
    return counting


def _whole_run(picture: Image.Image) -> list[tuple[tuple[int, int, int, int], float]]:
    """What dlib finds scanning every level of the picture as the engine analyses it: (box, score)."""
    pixels = _analysis_pixels(picture, max_side=800)
    rectangles, scores, _ = face_engine()._frontend._detector.run(pixels, 0, 0.0)
    return [((r.left(), r.top(), r.right(), r.bottom()), score) for r, score in zip(rectangles, scores, strict=True)]


def _read(picture: Image.Image):
    face, rival = dominant_face(face_engine().faces(picture))
    return (face.box, face.score, rival) if face is not None else None


def _expected(picture: Image.Image):
    found = _whole_run(picture)
    confident = [(box, score) for box, score in found if score >= CONFIDENT_FACE_SCORE]
    if not found:
        return None
    if not confident:
        box, score = max(found, key=lambda item: item[1])
        return box, score, False

    def area(box):
        return (box[2] - box[0] + 1) * (box[3] - box[1] + 1)

    box, score = max(confident, key=lambda item: area(item[0]))
    rival = any(other != box and area(other) >= COMPARABLE_FACE_AREA * area(box) for other, _ in confident)
    return box, score, rival


def _read_counted(counted: _Counting, picture: Image.Image):
    counted.sizes.clear()
    read = _read(picture)
    return read, list(counted.sizes)


def test_a_selfies_frames_are_read_the_short_way_and_find_what_the_whole_run_finds(counted):
    frames = [open_image(data) for _, data in challenge_frames(["left", "center", "right", "center"])]
    for frame in frames:
        read, sizes = _read_counted(counted, frame)
        assert read is not None and read == _expected(frame)
        if read[1] >= CONFIDENT_FACE_SCORE:  # one run, on the picture shrunk two pyramid levels (480 -> 333)
            assert sizes == [(333, 333)]
        else:  # no confident face: the best-scoring one might be on a skipped level, so every level is scanned
            assert sizes == [(333, 333), (480, 480)]


def test_a_face_too_small_for_the_short_way_is_found_on_the_whole_pyramid(counted):
    # The astronaut's face, about 110 px across: the short way could miss a rival of its size, so it is not taken.
    picture = Image.new("RGB", (480, 480), (90, 90, 90))
    picture.paste(astronaut_portrait(size=240)[0], (120, 120))

    read, sizes = _read_counted(counted, picture)

    assert read is not None and read == _expected(picture)
    assert sizes == [(333, 333), (480, 480)]


@pytest.mark.research_data("faces-dev", "faces-aaf", "faces-pairs")
def test_on_labelled_photos_the_faces_read_are_the_whole_runs():
    photos = []
    for name in ("faces-dev", "faces-aaf", "faces-pairs"):
        paths = sorted(
            path for path in (research_data_dir() / name).rglob("*") if path.suffix.lower() in {".jpg", ".png"}
        )
        photos += random.Random(5).sample(paths, 60)
    differing = []
    for path in photos:
        picture = open_image(path.read_bytes())
        if _read(picture) != _expected(picture):
            differing.append(path.name)
    assert differing == []


def test_two_faces_of_a_size_are_still_rivals():
    portrait = np.asarray(astronaut_portrait(size=300)[0])
    picture = Image.new("RGB", (800, 480), (90, 90, 90))
    picture.paste(Image.fromarray(portrait), (40, 90))
    picture.paste(Image.fromarray(portrait), (460, 90))

    read = _read(picture)

    assert read is not None and read[2] is True and read == _expected(picture)
