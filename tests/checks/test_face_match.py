"""The holder match on pictures a user would send: a passport page whose portrait is, or is not, the live face."""

import io

import numpy as np
import pytest
from PIL import Image, ImageFilter

from checks import face_match
from checks.face_match import (
    MATCH_THRESHOLD,
    MESSAGE_PORTRAIT_BLURRED,
    FaceDescriptor,
    compare,
    holder_match,
    live_descriptor,
    portrait_descriptor,
    score,
)
from checks.results import HolderMatch, Retake
from tests.support.documents import encode, mrz_card, td3_lines
from tests.support.faces import astronaut_portrait, challenge_frames, hopper_portrait

CHALLENGE = ["left", "right", "center"]


def centre_frames(person: str) -> list[bytes]:
    return [data for step, data in challenge_frames(CHALLENGE, person=person) if step == "center"]


@pytest.fixture(scope="module")
def astronaut_page() -> Image.Image:
    return mrz_card(td3_lines(), portrait=astronaut_portrait()[0])


def test_the_live_face_matches_the_portrait_on_its_own_passport_page(astronaut_page):
    match = compare(live_descriptor(centre_frames("astronaut")), portrait_descriptor([astronaut_page]))
    assert match.matched and match.score >= MATCH_THRESHOLD


def test_another_persons_live_face_does_not_match_the_portrait(astronaut_page):
    match = compare(live_descriptor(centre_frames("hopper")), portrait_descriptor([astronaut_page]))
    assert not match.matched and 0 <= match.score < MATCH_THRESHOLD


def test_the_portrait_and_the_live_face_are_read_with_their_age(astronaut_page):
    portrait, live = portrait_descriptor([astronaut_page]), live_descriptor(centre_frames("astronaut"))
    # FaceRes reads the astronaut (about 40 in the photo) as an adult on the page and in front of the camera.
    assert portrait.age >= 25 and live.age >= 25


def test_at_the_same_distance_two_childrens_faces_score_lower_than_two_adults():
    # Children's faces look alike: a child holding an adult's document is read at the child's age, where the
    # fused score asks the descriptors to be closer than between two adults.
    one, other = np.zeros(128), np.full(128, 0.45 / np.sqrt(128))  # descriptors 0.45 apart
    adults = score(FaceDescriptor(one, 30.0), FaceDescriptor(other, 34.0))
    child_and_adult = score(FaceDescriptor(one, 9.0), FaceDescriptor(other, 34.0))
    assert child_and_adult < adults


def test_a_portrait_too_blurred_to_match_is_sent_back_saying_why_without_spending_an_attempt(astronaut_page):
    # Blurred this much the page's portrait no longer matches its own holder (assurance/research/holder_match).
    blurred = encode(astronaut_page.filter(ImageFilter.GaussianBlur(6)))
    result = holder_match(centre_frames("astronaut"), [blurred])
    assert isinstance(result, Retake) and result.message == MESSAGE_PORTRAIT_BLURRED and not result.spends_attempt


def test_a_slightly_blurred_portrait_is_still_compared_and_matched(astronaut_page):
    result = holder_match(centre_frames("astronaut"), [encode(astronaut_page.filter(ImageFilter.GaussianBlur(3)))])
    assert isinstance(result, HolderMatch) and result.matched


def test_a_document_without_a_portrait_gives_no_face_to_match():
    assert portrait_descriptor([mrz_card(td3_lines())]) is None


def test_a_picture_without_a_face_gives_no_live_face(cat_jpeg):
    assert live_descriptor([cat_jpeg]) is None


def test_a_model_file_with_another_checksum_is_refused(tmp_path, monkeypatch):
    forged = tmp_path / face_match.MODEL_FILE
    forged.write_bytes(b"not the model")
    monkeypatch.setattr(face_match, "model_path", lambda: forged)
    with pytest.raises(RuntimeError, match="expected sha256"):
        face_match.FaceMatcher()


def test_the_hopper_portrait_is_a_second_person_for_the_fixtures():
    # The fixtures' second face must be found as one face, or the mismatch tests would test nothing.
    picture = Image.open(io.BytesIO(centre_frames("hopper")[0]))
    assert face_match.face_descriptor(picture) is not None
    assert hopper_portrait()[0].size == (480, 480)


def test_the_portrait_sharpness_is_the_variance_of_scipys_laplacian():
    # The service computes it without scipy (a research dependency); the research measured with scipy's.
    laplace = pytest.importorskip("scipy.ndimage").laplace
    from checks.face_match import _sharpness

    rng = np.random.default_rng(7)
    for shape in [(150, 150, 3), (37, 41, 3)]:
        chip = rng.integers(0, 256, shape, dtype=np.uint8)
        assert _sharpness(chip) == pytest.approx(float(laplace(chip.astype(np.float64).mean(axis=2)).var()))
