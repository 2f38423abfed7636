"""scripts/build_age_network.py: reading face-api's TF.js weights, and the model the service loads."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from checks.faces import AGE_NETWORK_PATH

_SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_age_network.py"
_spec = importlib.util.spec_from_file_location("build_age_network", _SCRIPT)
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def _manifest(weights: list[dict]) -> bytes:
    return json.dumps([{"paths": ["age_gender_model.bin"], "weights": weights}]).encode()


def test_the_model_the_service_loads_is_the_hash_checked_conversion():
    assert hashlib.sha256(AGE_NETWORK_PATH.read_bytes()).hexdigest() == build.MODEL_SHA256


def test_quantised_weights_are_dequantised_as_tfjs_does_and_floats_read_in_manifest_order():
    manifest = _manifest(
        [
            {
                "name": "a",
                "shape": [2, 2],
                "dtype": "float32",
                "quantization": {"dtype": "uint8", "scale": 0.5, "min": -1.0},
            },
            {"name": "b", "shape": [2], "dtype": "float32"},
        ]
    )
    shard = bytes([0, 1, 2, 255]) + np.array([1.5, -2.25], dtype="<f4").tobytes()

    weights = build.read_weights(manifest, shard)

    np.testing.assert_array_equal(weights["a"], np.array([[-1.0, -0.5], [0.0, 126.5]], dtype=np.float32))
    np.testing.assert_array_equal(weights["b"], np.array([1.5, -2.25], dtype=np.float32))


def test_a_shard_longer_than_its_manifest_is_refused():
    manifest = _manifest([{"name": "b", "shape": [1], "dtype": "float32"}])

    with pytest.raises(build.BuildFailed):
        build.read_weights(manifest, np.zeros(2, dtype="<f4").tobytes())


def test_the_service_names_the_package_version_the_build_pins():
    from checks.faces import AGE_NETWORK_PACKAGE

    assert AGE_NETWORK_PACKAGE == f"{build.PACKAGE}@{build.VERSION}"
