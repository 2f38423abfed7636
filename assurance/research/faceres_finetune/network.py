"""HSE FaceRes in torch: the ONNX graph the service runs, node by node, its initializers as parameters.

onnx2torch cannot be used here (it imports torchvision, which does not import on this machine), and the
graph is a plain MobileNet v1 with folded batch norms and a few heads: interpreting its 15 kinds of node
is shorter than converting them. `check` compares it with onnxruntime on real crops.

Trainable: every convolution and dense kernel, every per-channel scale and shift (the folded batch
norms) and the dense biases. Fixed: the input's channel order and mean pixel, and ReLU6's clip bounds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ONNX_PATH = Path(__file__).resolve().parents[3] / ".age-network" / "face_description_net.onnx"
AGES = torch.arange(1, 101, dtype=torch.float32)  # the `age` output is a distribution over ages 1..100
_OPS = {
    "Conv", "Relu", "Add", "Min", "Max", "Mul", "MatMul", "GlobalAveragePool", "Flatten", "Transpose", "Gather",
    "Sub", "Sigmoid", "Softmax", "Identity",
}  # fmt: skip
HEAD_PREFIXES = ("feats/", "age_pred/", "gender_pred/")
_FIXED_OPS = {"Min", "Max", "Gather", "Sub"}  # clip bounds and preprocessing constants stay as they are


class FaceRes(nn.Module):
    """(n, 224, 224, 3) RGB float pixels 0-255 -> (features (n, 1024), age distribution (n, 100))."""

    def __init__(self, onnx_path: Path = ONNX_PATH) -> None:
        import onnx
        from onnx import helper, numpy_helper

        super().__init__()
        graph = onnx.load(str(onnx_path)).graph
        unknown = {node.op_type for node in graph.node} - _OPS
        if unknown:
            raise ValueError(f"operations this mirror does not know: {sorted(unknown)}")
        initializers = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
        fixed = {name for node in graph.node if node.op_type in _FIXED_OPS for name in node.input}
        self.parameter_names: dict[str, str] = {}  # ONNX name -> attribute name
        self.weights = nn.ParameterDict()
        for number, (name, value) in enumerate(initializers.items()):
            key = f"w{number}"
            self.parameter_names[name] = key
            tensor = torch.from_numpy(np.array(value))
            if name in fixed or not tensor.is_floating_point():
                self.register_buffer(f"fixed_{key}", tensor)
            else:
                self.weights[key] = nn.Parameter(tensor)
        self.nodes = [
            (node.op_type, list(node.input), list(node.output),
             {a.name: helper.get_attribute_value(a) for a in node.attribute})
            for node in graph.node
        ]  # fmt: skip
        self.input_name = graph.input[0].name
        self.output_names = [output.name for output in graph.output]

    def head_keys(self) -> set[str]:
        """The parameters of the dense layers after the pooled features (the age and gender heads)."""
        return {
            key for name, key in self.parameter_names.items() if name.startswith(HEAD_PREFIXES) and key in self.weights
        }

    def initial(self, name: str) -> torch.Tensor:
        key = self.parameter_names[name]
        return self.weights[key] if key in self.weights else getattr(self, f"fixed_{key}")

    def forward(self, face: torch.Tensor) -> dict[str, torch.Tensor]:
        values: dict[str, torch.Tensor] = {self.input_name: face}

        def get(name: str) -> torch.Tensor:
            return values[name] if name in values else self.initial(name)

        for op, inputs, outputs, attributes in self.nodes:
            args = [get(name) for name in inputs if name]
            values[outputs[0]] = _run(op, args, attributes)
        return {name: values[name] for name in self.output_names}


def _run(op: str, args: list[torch.Tensor], attributes: dict) -> torch.Tensor:
    if op == "Conv":
        return _conv(args, attributes)
    if op == "Relu":
        return F.relu(args[0])
    if op in ("Add", "Mul", "Sub", "Min", "Max", "MatMul"):
        a, b = args
        return {
            "Add": torch.add, "Mul": torch.mul, "Sub": torch.sub, "Min": torch.minimum, "Max": torch.maximum,
            "MatMul": torch.matmul,
        }[op](a, b)  # fmt: skip
    if op == "GlobalAveragePool":
        return args[0].mean(dim=(2, 3), keepdim=True)
    if op == "Flatten":
        return torch.flatten(args[0], start_dim=attributes.get("axis", 1))
    if op == "Transpose":
        return args[0].permute(*attributes["perm"])
    if op == "Gather":
        return torch.index_select(args[0], attributes.get("axis", 0), args[1].long())
    if op == "Sigmoid":
        return torch.sigmoid(args[0])
    if op == "Softmax":
        return torch.softmax(args[0], dim=attributes.get("axis", -1))
    if op == "Identity":
        return args[0]
    raise ValueError(op)


def _conv(args: list[torch.Tensor], attributes: dict) -> torch.Tensor:
    x, kernel = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    strides = attributes.get("strides", [1, 1])
    groups = attributes.get("group", 1)
    auto_pad = attributes.get("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad == "SAME_UPPER":  # TF's SAME: the extra row and column at the end
        padding = []
        for axis in (3, 2):  # F.pad wants the last axis first
            size, stride, k = x.shape[axis], strides[axis - 2], kernel.shape[axis]
            total = max((-(-size // stride) - 1) * stride + k - size, 0)
            padding += [total // 2, total - total // 2]
        x = F.pad(x, padding)
    elif auto_pad not in ("NOTSET", "VALID") or any(attributes.get("pads", [0])):
        raise ValueError(f"Conv padding {auto_pad} {attributes.get('pads')}")
    return F.conv2d(x, kernel, bias, stride=strides, groups=groups)


def expected_age(distribution: torch.Tensor) -> torch.Tensor:
    return distribution @ AGES.to(distribution.dtype)


def check(crops: np.ndarray, batch: int = 16) -> tuple[float, float]:
    """Max |torch - onnxruntime| of `features` and of the expected age, on these (n, 224, 224, 3) uint8 crops."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(ONNX_PATH), providers=["CPUExecutionProvider"])
    model = FaceRes().eval()
    feature_diff = age_diff = 0.0
    for start in range(0, len(crops), batch):
        faces = crops[start : start + batch].astype(np.float32)
        features, distribution = session.run(["features", "age"], {"face": faces})
        with torch.no_grad():
            out = model(torch.from_numpy(faces))
        feature_diff = max(feature_diff, float(np.abs(out["features"].numpy() - features).max()))
        ages = distribution @ np.arange(1, 101, dtype=np.float32)
        age_diff = max(age_diff, float(np.abs(expected_age(out["age"]).numpy() - ages).max()))
    return feature_diff, age_diff


def export_onnx(model: FaceRes, path: Path, onnx_path: Path = ONNX_PATH) -> None:
    """The ONNX graph the service runs, with this model's (fine-tuned) initializers in place of the originals."""
    import onnx
    from onnx import numpy_helper

    built = onnx.load(str(onnx_path))
    for index, init in enumerate(built.graph.initializer):
        value = model.initial(init.name).detach().cpu().numpy()
        built.graph.initializer[index].CopyFrom(numpy_helper.from_array(value.astype(value.dtype), init.name))
    onnx.checker.check_model(built)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(built, str(path))
