"""Builds the age network the service runs (ONNX) from face-api's TF.js weights, at install time.

The network is the AgeGenderNet of the npm package @vladmandic/face-api (code MIT; the weights
ship inside the package). We fetch the pinned package tarball with `npm pack`, check its registry
integrity and the hashes of the weights manifest and shard, rebuild the network's graph from
face-api's own definition (src/xception/TinyXception.ts, src/ageGenderNet/AgeGenderNet.ts) with
the `onnx` helpers, and check the hash of the .onnx produced: the conversion is deterministic, so
any difference means the inputs or the converter changed, and we stop rather than run another
model. The service itself only needs onnxruntime and the .onnx file.

Run by scripts/setup-env.sh:  .venv/bin/python scripts/build_age_network.py
A second run only re-hashes the .onnx (milliseconds). Exits non-zero, loudly, on any mismatch.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NETWORK_DIR = ROOT / ".age-network"  # owned by this script, gitignored
MODEL_PATH = NETWORK_DIR / "age_gender_net.onnx"

PACKAGE = "@vladmandic/face-api"
VERSION = "1.7.15"
# From the registry (`npm view @vladmandic/face-api@1.7.15 dist.integrity`).
TARBALL_INTEGRITY = "sha512-WDMmK3CfNLo8jylWqMoQgf4nIst3M0fzx1dnac96wv/dvMTN4DxC/Pq1DGtduDk1lktCamQ3MIDXFnvrdHTXDw=="
# sha256 of the files read from the tarball, and of the model this script writes from them.
INPUT_SHA256 = {
    "package/model/age_gender_model-weights_manifest.json": (
        "74b60bf3ebf981bf4e661e9cca3a185614e10b25d797118b62e2a68d3ff2569f"
    ),
    "package/model/age_gender_model.bin": "49f92bbc0afef2342c4385e4a2b0acb6d7a727c6f0aa539499719a81acf9abaa",
}
MODEL_SHA256 = "7edc43d633b7a42d15f4526ba134d693f8e68e06bd82ad66c960932426ff40c8"

INPUT_SIZE = 112  # face-api resizes the face to 112 x 112 (TinyXception.forwardInput)
MEAN_RGB = (122.782, 117.001, 104.298)  # subtracted, then divided by 255 (same place)
MAIN_BLOCKS = 2  # AgeGenderNet's TinyXception(2)
OPSET = 17
IR_VERSION = 8


class BuildFailed(Exception):
    pass


def main() -> int:
    return build_once(
        "build_age_network", "age network", MODEL_PATH, MODEL_SHA256, f"{PACKAGE}@{VERSION}",
        lambda work: build_model(fetch_package_files(work)),
    )  # fmt: skip


def build_once(script: str, what: str, model_path: Path, expected: str, source: str, build) -> int:
    """Build a model with `build(work_dir) -> bytes` unless it is there with the pinned hash; install it whole."""
    if model_path.exists() and sha256(model_path.read_bytes()) == expected:
        return 0
    try:
        with tempfile.TemporaryDirectory(prefix=model_path.stem + "-") as work:
            model_bytes = build(Path(work))
    except BuildFailed as failure:
        print(f"{script}: FAILED: {failure}", file=sys.stderr)
        return 1
    produced = sha256(model_bytes)
    if produced != expected:
        print(f"{script}: FAILED: the converted model's sha256 is {produced}, expected {expected}", file=sys.stderr)
        return 1
    NETWORK_DIR.mkdir(exist_ok=True)
    partial = model_path.with_suffix(".onnx.partial")
    partial.write_bytes(model_bytes)
    os.replace(partial, model_path)
    print(f"== {what}: built {model_path.relative_to(ROOT)} from {source}")
    return 0


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch_package_files(
    work: Path,
    package: str = PACKAGE,
    version: str = VERSION,
    integrity_expected: str = TARBALL_INTEGRITY,
    input_sha256: dict[str, str] = INPUT_SHA256,
) -> dict[str, bytes]:
    """A pinned package's files, after checking the tarball's registry integrity and each file's hash."""
    cache = NETWORK_DIR / "npm-cache"
    npm = shutil.which("npm")
    if npm is None:
        raise BuildFailed("npm is not installed (the age network is built from an npm package)")
    completed = subprocess.run(
        [npm, "pack", f"{package}@{version}", "--silent", "--cache", str(cache), "--pack-destination", str(work)],
        capture_output=True,
        text=True,
    )
    tarballs = list(work.glob("*.tgz"))
    if completed.returncode != 0 or len(tarballs) != 1:
        raise BuildFailed(f"npm pack {package}@{version} failed: {completed.stderr.strip()}")
    tarball = tarballs[0].read_bytes()
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    if integrity != integrity_expected:
        raise BuildFailed(f"the tarball's integrity is {integrity}, expected {integrity_expected}")
    files = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for name, expected in input_sha256.items():
            member = archive.extractfile(name)
            if member is None:
                raise BuildFailed(f"{name} is missing from the tarball")
            data = member.read()
            if sha256(data) != expected:
                raise BuildFailed(f"{name} has sha256 {sha256(data)}, expected {expected}")
            files[name] = data
    return files


def read_weights(manifest: bytes, shard: bytes) -> dict[str, np.ndarray]:
    """TF.js weights: tensors concatenated in manifest order; uint8-quantised ones dequantised
    as q * scale + min (computed in float64, stored float32, as tfjs does)."""
    groups = json.loads(manifest)
    if len(groups) != 1 or groups[0]["paths"] != ["age_gender_model.bin"]:
        raise BuildFailed("unexpected weights manifest layout")
    weights: dict[str, np.ndarray] = {}
    offset = 0
    for entry in groups[0]["weights"]:
        shape = tuple(entry["shape"])
        count = int(np.prod(shape))
        if entry["dtype"] != "float32":
            raise BuildFailed(f"unexpected dtype for {entry['name']}")
        quantization = entry.get("quantization")
        if quantization is None:
            values = np.frombuffer(shard, dtype="<f4", count=count, offset=offset)
            offset += 4 * count
        elif quantization["dtype"] == "uint8":
            quantised = np.frombuffer(shard, dtype=np.uint8, count=count, offset=offset)
            offset += count
            values = (quantised.astype(np.float64) * quantization["scale"] + quantization["min"]).astype(np.float32)
        else:
            raise BuildFailed(f"unexpected quantisation for {entry['name']}")
        weights[entry["name"]] = values.reshape(shape).astype(np.float32)
    if offset != len(shard):
        raise BuildFailed(f"the shard has {len(shard)} bytes, the manifest describes {offset}")
    return weights


def build_model(files: dict[str, bytes]) -> bytes:
    weights = read_weights(
        files["package/model/age_gender_model-weights_manifest.json"],
        files["package/model/age_gender_model.bin"],
    )
    return AgeGenderGraph(weights).model().SerializeToString()


class GraphBuilder:
    """An ONNX graph written node by node: constants become initialisers, each node is named by its order."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.initializers: list = []

    def _constant(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def _op(self, op_type: str, inputs: list[str], *, output: str | None = None, **attributes) -> str:
        from onnx import helper

        name = f"{op_type.lower()}_{len(self.nodes)}"
        output = output or name
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=name, **attributes))
        return output


class AgeGenderGraph(GraphBuilder):
    """AgeGenderNet as face-api defines it, NHWC TF.js weights laid out for ONNX's NCHW ops.

    Input "face": float32 [N, 112, 112, 3], RGB 0..255 (the square face, resized).
    Outputs "age": float32 [N] in years (a regression, no activation) and "gender": [N, 2] softmax
    (male, female), which the service does not use.
    """

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        super().__init__()
        self.weights = weights
        self.used: set[str] = set()

    def model(self):
        import onnx
        from onnx import TensorProto, helper

        x = self._op("Transpose", ["face"], perm=[0, 3, 1, 2])
        mean = self._constant("mean_rgb", np.array(MEAN_RGB, np.float32).reshape(1, 3, 1, 1))
        x = self._op("Sub", [x, mean])
        x = self._op("Div", [x, self._constant("scale", np.array(255, np.float32))])
        # TinyXception.forwardInput
        x = self._op("Relu", [self._conv(x, "entry_flow/conv_in", stride=2)])
        x = self._reduction_block(x, "entry_flow/reduction_block_0", activate_input=False)
        x = self._reduction_block(x, "entry_flow/reduction_block_1")
        for index in range(MAIN_BLOCKS):
            x = self._main_block(x, f"middle_flow/main_block_{index}")
        x = self._reduction_block(x, "exit_flow/reduction_block")
        x = self._op("Relu", [self._separable_conv(x, "exit_flow/separable_conv")])
        # AgeGenderNet.runNet: avgPool 7x7 stride 2 'valid' over the 7x7 features, then the heads.
        x = self._op("AveragePool", [x], kernel_shape=[7, 7], strides=[2, 2])
        pooled = self._op("Flatten", [x], axis=1, output="features")
        age = self._dense(pooled, "fc/age")
        self._op("Squeeze", [age, self._constant("age_axis", np.array([1], np.int64))], output="age")
        self._op("Softmax", [self._dense(pooled, "fc/gender")], axis=1, output="gender")
        unused = set(self.weights) - self.used
        if unused:
            raise BuildFailed(f"weights not used by the graph: {sorted(unused)}")

        graph = helper.make_graph(
            self.nodes,
            "face_api_age_gender_net",
            [helper.make_tensor_value_info("face", TensorProto.FLOAT, ["N", INPUT_SIZE, INPUT_SIZE, 3])],
            [
                helper.make_tensor_value_info("age", TensorProto.FLOAT, ["N"]),
                helper.make_tensor_value_info("gender", TensorProto.FLOAT, ["N", 2]),
                # The 512 pooled features the heads read (checks.age_heads).
                helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", 512]),
            ],
            self.initializers,
        )
        model = helper.make_model(
            graph,
            producer_name="ageverify scripts/build_age_network.py",
            producer_version=f"{PACKAGE}@{VERSION}",
            opset_imports=[helper.make_opsetid("", OPSET)],
            ir_version=IR_VERSION,
        )
        onnx.checker.check_model(model, full_check=True)
        return model

    # Layers (face-api's src/common and src/xception), TF 'same' padding = ONNX SAME_UPPER.
    def _reduction_block(self, x: str, prefix: str, *, activate_input: bool = True) -> str:
        out = self._op("Relu", [x]) if activate_input else x
        out = self._separable_conv(out, f"{prefix}/separable_conv0")
        out = self._separable_conv(self._op("Relu", [out]), f"{prefix}/separable_conv1")
        out = self._op("MaxPool", [out], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER")
        return self._op("Add", [out, self._conv(x, f"{prefix}/expansion_conv", stride=2)])

    def _main_block(self, x: str, prefix: str) -> str:
        out = self._separable_conv(self._op("Relu", [x]), f"{prefix}/separable_conv0")
        out = self._separable_conv(self._op("Relu", [out]), f"{prefix}/separable_conv1")
        out = self._separable_conv(self._op("Relu", [out]), f"{prefix}/separable_conv2")
        return self._op("Add", [out, x])

    def _conv(self, x: str, prefix: str, *, stride: int) -> str:
        filters = self._weight(f"{prefix}/filters").transpose(3, 2, 0, 1)  # HWIO -> OIHW
        bias = self._weight(f"{prefix}/bias")
        return self._op(
            "Conv",
            [x, self._constant(f"{prefix}/filters", filters), self._constant(f"{prefix}/bias", bias)],
            kernel_shape=list(filters.shape[2:]),
            strides=[stride, stride],
            auto_pad="SAME_UPPER",
        )

    def _separable_conv(self, x: str, prefix: str) -> str:
        depthwise = self._weight(f"{prefix}/depthwise_filter")  # [3, 3, C, 1]
        channels = depthwise.shape[2]
        depthwise = depthwise.transpose(2, 3, 0, 1)  # [C, 1, 3, 3]
        pointwise = self._weight(f"{prefix}/pointwise_filter").transpose(3, 2, 0, 1)  # [O, C, 1, 1]
        bias = self._weight(f"{prefix}/bias")
        out = self._op(
            "Conv",
            [x, self._constant(f"{prefix}/depthwise_filter", depthwise)],
            kernel_shape=[3, 3],
            group=channels,
            auto_pad="SAME_UPPER",
        )
        return self._op(
            "Conv",
            [out, self._constant(f"{prefix}/pointwise_filter", pointwise), self._constant(f"{prefix}/bias", bias)],
            kernel_shape=[1, 1],
        )

    def _dense(self, x: str, prefix: str) -> str:
        weights = self._constant(f"{prefix}/weights", self._weight(f"{prefix}/weights"))
        bias = self._constant(f"{prefix}/bias", self._weight(f"{prefix}/bias"))
        return self._op("Gemm", [x, weights, bias])

    def _weight(self, name: str) -> np.ndarray:
        self.used.add(name)
        return self.weights[name]


if __name__ == "__main__":
    sys.exit(main())
