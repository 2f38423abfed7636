"""scripts/build_face_match_network.py: dlib's face descriptor model as ONNX, held to dlib's own answers.

dlib (dlib-bin, which reads the model file itself) is the other side here: the converted network must give
the descriptors dlib gives, on the chips the service cuts, or every threshold calibrated on dlib's would be
wrong."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from skimage import data

from checks import face_match
from checks.faces import dominant_face, face_engine
from checks.images import decoded_once
from tests.support.faces import astronaut_portrait, hopper_portrait

_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(_SCRIPTS))
import build_face_match_network as build  # noqa: E402


def _chips() -> list[np.ndarray]:
    """The chips the service cuts of three faces, and one chip of noise."""
    engine = face_engine()
    pictures = [Image.fromarray(data.astronaut()), astronaut_portrait()[0], hopper_portrait()[0]]
    chips = []
    for picture in pictures:
        face, _ = dominant_face(engine.faces(picture, identity_chips=True))
        chips.append(face.identity_chip)
    chips.append(np.random.default_rng(3).integers(0, 256, size=(150, 150, 3), dtype=np.uint8))
    return chips


@pytest.fixture(scope="module")
def dlib_network():
    import dlib

    return dlib.face_recognition_model_v1(str(face_match.model_verify()))


def test_the_converted_network_gives_dlibs_own_descriptors(dlib_network):
    chips = _chips()
    expected = [np.asarray(dlib_network.compute_face_descriptor(chip)) for chip in chips]
    mirrored = [np.asarray(dlib_network.compute_face_descriptor(np.ascontiguousarray(chip[:, ::-1]))) for chip in chips]

    with decoded_once():  # one batch through the network, as the live face reads its frames
        read = face_match.face_matcher().descriptors(chips)

    for descriptor, face, mirror in zip(read, expected, mirrored, strict=True):
        np.testing.assert_allclose(descriptor.values, (face + mirror) / 2, rtol=0, atol=1e-5)
    # Different faces are far apart, as dlib's: the comparison is not of near-constant answers.
    assert np.linalg.norm(read[0].values - read[2].values) > 0.6


def test_one_chip_reads_the_same_alone_as_in_a_batch():
    chips = _chips()
    alone = [face_match.face_matcher().descriptor(chip).values for chip in chips]
    batch = [descriptor.values for descriptor in face_match.face_matcher().descriptors(chips)]
    np.testing.assert_allclose(alone, batch, rtol=0, atol=1e-6)


def test_the_network_the_service_loads_is_the_hash_checked_conversion_of_the_checked_file():
    assert build.MODEL_SHA256 == face_match.NETWORK_SHA256
    assert build.SOURCE_SHA256 == face_match.MODEL_SHA256
    assert hashlib.sha256(face_match.NETWORK_PATH.read_bytes()).hexdigest() == face_match.NETWORK_SHA256
    assert build.MODEL_PATH == face_match.NETWORK_PATH


def test_a_network_file_with_another_checksum_is_refused(tmp_path, monkeypatch):
    forged = tmp_path / "face_match_net.onnx"
    forged.write_bytes(b"not the network")
    monkeypatch.setattr(face_match, "NETWORK_PATH", forged)
    with pytest.raises(RuntimeError, match="scripts/build_face_match_network.py"):
        face_match.FaceMatcher()


def test_a_model_file_with_a_layer_out_of_place_stops_the_build():
    source = build.source_bytes()
    first_con = source.find(b"\x01\x05con_4")
    # The stem's convolution renamed to a layer the network does not expect there.
    tampered = source[:first_con] + b"\x01\x05relu_" + source[first_con + 7 :]
    with pytest.raises(build.BuildFailed):
        build.build_model(tampered)
