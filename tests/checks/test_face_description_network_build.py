"""scripts/build_face_description_network.py: the TF.js graph converter, and the model the service loads."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime
import pytest
from skimage import data

from checks.faces import DESCRIPTION_NETWORK_PACKAGE, DESCRIPTION_NETWORK_PATH, dominant_face, face_engine

_SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(_SCRIPTS))
_spec = importlib.util.spec_from_file_location(
    "build_face_description_network", _SCRIPTS / "build_face_description_network.py"
)
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def _attr(kind: str, value) -> dict:
    if kind == "s":
        return {"s": base64.b64encode(value.encode()).decode()}
    return {"list": {"i": [str(v) for v in value]}} if kind == "ints" else {"list": {"s": value}}


def _graph(nodes: list[dict], weights: list[tuple[str, np.ndarray, str]]) -> tuple[bytes, bytes]:
    """A TF.js graph model (JSON, shard) of these nodes; weights as (name, values, stored dtype)."""
    manifest, shard = [], b""
    for name, values, stored in weights:
        entry = {"name": name, "shape": list(values.shape), "dtype": "int32" if stored == "int32" else "float32"}
        if stored == "float16":
            entry["quantization"] = {"dtype": "float16", "original_dtype": "float32"}
        manifest.append(entry)
        shard += values.astype({"float16": "<f2", "float32": "<f4", "int32": "<i4"}[stored]).tobytes()
    consts = [{"name": name, "op": "Const"} for name, _, _ in weights]
    graph = {
        "modelTopology": {"node": [{"name": "input_1", "op": "Placeholder"}, *consts, *nodes]},
        "weightsManifest": [{"paths": [Path(build.SHARD).name], "weights": manifest}],
    }
    return json.dumps(graph).encode(), shard


def _tiny_network(rng) -> tuple[bytes, bytes, dict[str, np.ndarray]]:
    """conv (stride 2, SAME) + per-channel scale and shift, ReLU6, depthwise conv, mean, dense, softmax."""
    w = {
        "conv": rng.normal(size=(3, 3, 3, 4)).astype(np.float32),
        "scale": rng.uniform(0.5, 1.5, size=4).astype(np.float32),
        "shift": rng.normal(size=4).astype(np.float32),
        "six": np.array(6.0, np.float32),
        "zero": np.array(0.0, np.float32),
        "depthwise": rng.normal(size=(3, 3, 4, 1)).astype(np.float32),
        "axes": np.array([1, 2], np.int32),
        "kernel": rng.normal(size=(4, 100)).astype(np.float32),
        "bias": rng.normal(size=100).astype(np.float32),
    }
    same = {"padding": _attr("s", "SAME")}
    nodes = [
        {
            "name": "c",
            "op": "Conv2D",
            "input": ["input_1", "conv"],
            "attr": {"strides": _attr("ints", [1, 2, 2, 1]), **same},
        },
        {"name": "m", "op": "Mul", "input": ["c", "scale"]},
        {"name": "a", "op": "Add", "input": ["m", "shift"]},
        {"name": "r", "op": "Relu", "input": ["a"]},
        {"name": "r6", "op": "Minimum", "input": ["r", "six"]},
        {"name": "r0", "op": "Maximum", "input": ["r6", "zero"]},
        {
            "name": "d",
            "op": "DepthwiseConv2dNative",
            "input": ["r0", "depthwise"],
            "attr": {"strides": _attr("ints", [1, 1, 1, 1]), **same},
        },  # fmt: skip
        {"name": "global_pooling/Mean", "op": "Mean", "input": ["d", "axes"]},
        {
            "name": "dense",
            "op": "_FusedMatMul",
            "input": ["global_pooling/Mean", "kernel", "bias"],
            "attr": {"fused_ops": _attr("strs", [base64.b64encode(b"BiasAdd").decode()])},
        },  # fmt: skip
        {"name": "age_pred/Softmax", "op": "Softmax", "input": ["dense"]},
    ]
    stored = {"conv": "float16", "axes": "int32"}
    weights = [(name, values, stored.get(name, "float32")) for name, values in w.items()]
    graph, shard = _graph(nodes, weights)
    return graph, shard, {name: values.astype(np.float16).astype(np.float32) if name == "conv" else values
                          for name, values in w.items()}  # fmt: skip


def _reference(face: np.ndarray, w: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The same network in plain numpy, NHWC, with TF's SAME padding (the extra row and column at the end)."""
    x = face[..., ::-1] - np.array(build.MEAN_BGR, np.float32)
    x = np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)))  # 224 -> 112 with stride 2: TF pads 0 before, 1 after
    out = np.zeros((1, 112, 112, 4), np.float32)
    for i in range(3):
        for j in range(3):
            out += x[:, i : i + 224 : 2, j : j + 224 : 2, :] @ w["conv"][i, j]
    x = np.clip(out * w["scale"] + w["shift"], 0, 6)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    x = sum(padded[:, i : i + 112, j : j + 112, :] * w["depthwise"][i, j, :, 0] for i in range(3) for j in range(3))
    features = x.mean(axis=(1, 2))
    logits = features @ w["kernel"] + w["bias"]
    return features, np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()


def test_the_converted_graph_computes_what_the_tensorflow_operations_compute():
    rng = np.random.default_rng(7)
    graph, shard, weights = _tiny_network(rng)
    session = onnxruntime.InferenceSession(build.build_model(graph, shard), providers=["CPUExecutionProvider"])
    face = rng.uniform(0, 255, size=(1, 224, 224, 3)).astype(np.float32)

    features, ages = session.run(["features", "age"], {"face": face})

    expected_features, expected_ages = _reference(face, weights)
    np.testing.assert_allclose(features, expected_features, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ages[0], expected_ages[0], rtol=1e-3, atol=1e-6)


def test_an_operation_the_converter_does_not_know_stops_the_build():
    graph, shard = _graph([{"name": "x", "op": "Conv3D", "input": ["input_1"]}], [])

    with pytest.raises(build.BuildFailed, match="Conv3D"):
        build.build_model(graph, shard)


def test_a_shard_longer_than_its_manifest_is_refused():
    graph, shard = _graph([], [("b", np.zeros(1, np.float32), "float32")])

    with pytest.raises(build.BuildFailed, match="manifest"):
        build.build_model(graph, shard + b"\0\0\0\0")


def test_the_model_the_service_loads_is_the_hash_checked_conversion():
    assert hashlib.sha256(DESCRIPTION_NETWORK_PATH.read_bytes()).hexdigest() == build.MODEL_SHA256
    assert DESCRIPTION_NETWORK_PACKAGE.startswith(f"{build.PACKAGE}@{build.VERSION} ")


def test_the_network_reads_an_adult_face_as_an_adult():
    engine = face_engine()
    face, _ = dominant_face(engine.faces(_astronaut(), description_inputs=True))

    features, ages = engine.descriptions([face.description_input])

    assert features.shape == (1, 1024) and 25 <= ages[0] <= 60


def _astronaut():
    from PIL import Image

    return Image.fromarray(data.astronaut())
