"""SSR-Net (shamangary/SSR-Net, Apache-2.0): its Keras 2.1 model (.json topology, .h5 weights) run in numpy.

Only the layers SSR-Net uses are interpreted (valid 3x3 convolutions, batch norm, pooling, dense, the merge of
its three stages into an age, V = 101 as in its code). Inputs: (n, 64, 64, 3) BGR pixels 0-255, as its
training data was read (cv2.imread, no scaling). Reading the .h5 needs h5py, which the service never installs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def load(json_path, h5_path):
    import h5py

    config = json.loads(Path(json_path).read_text())["config"]
    weights = {}
    with h5py.File(h5_path, "r") as f:
        root = f["model_weights"] if "model_weights" in f else f
        for name in root.attrs["layer_names"]:
            name = name.decode() if isinstance(name, bytes) else name
            group = root[name]
            names = [n.decode() if isinstance(n, bytes) else n for n in group.attrs["weight_names"]]
            weights[name] = [np.asarray(group[n], dtype=np.float64) for n in names]
    return config, weights


def _pool(x, size, stride, kind):
    n, h, w, c = x.shape
    oh, ow = (h - size) // stride + 1, (w - size) // stride + 1
    win = sliding_window_view(x, (size, size), axis=(1, 2))[:, ::stride, ::stride][:, :oh, :ow]
    return win.max(axis=(-1, -2)) if kind == "max" else win.mean(axis=(-1, -2))


def _conv(x, kernel, bias):
    kh, kw = kernel.shape[:2]
    win = sliding_window_view(x, (kh, kw), axis=(1, 2))  # n, oh, ow, c, kh, kw
    out = np.einsum("nhwcij,ijco->nhwo", win, kernel, optimize=True)
    return out + bias


ACT = {"linear": lambda v: v, "relu": lambda v: np.maximum(v, 0), "tanh": np.tanh}


def run(model, x):
    config, weights = model
    values = {}
    for layer in config["layers"]:
        kind, name, c = layer["class_name"], layer["name"], layer["config"]
        inputs = [values[n[0]] for n in layer["inbound_nodes"][0]] if layer["inbound_nodes"] else []
        w = weights.get(name, [])
        if kind == "InputLayer":
            out = x
        elif kind == "Conv2D":
            assert c["padding"] == "valid" and tuple(c["strides"]) == (1, 1)
            out = ACT[c["activation"]](_conv(inputs[0], w[0], w[1] if len(w) > 1 else 0))
        elif kind == "BatchNormalization":
            gamma, beta, mean, var = w
            out = (inputs[0] - mean) / np.sqrt(var + c["epsilon"]) * gamma + beta
        elif kind == "Activation":
            out = ACT[c["activation"]](inputs[0])
        elif kind in ("MaxPooling2D", "AveragePooling2D"):
            out = _pool(inputs[0], c["pool_size"][0], c["strides"][0], "max" if kind.startswith("Max") else "avg")
        elif kind == "Flatten":
            out = inputs[0].reshape(len(inputs[0]), -1)
        elif kind == "Dropout":
            out = inputs[0]
        elif kind == "Dense":
            out = ACT[c["activation"]](inputs[0] @ w[0] + (w[1] if len(w) > 1 else 0))
        elif kind == "Multiply":
            out = inputs[0] * inputs[1]
        elif kind == "Lambda":
            a = c["arguments"]
            out = _merge(inputs, a["s1"], a["s2"], a["s3"], a["lambda_local"], a["lambda_d"])
        else:
            raise ValueError(kind)
        values[name] = out
    return values[config["output_layers"][0][0]][:, 0]


def _merge(x, s1, s2, s3, lambda_local, lambda_d, V=101):
    a = sum((i + lambda_local * x[6][:, i]) * x[0][:, i] for i in range(s1))[:, None]
    a = a / (s1 * (1 + lambda_d * x[3]))
    b = sum((j + lambda_local * x[7][:, j]) * x[1][:, j] for j in range(s2))[:, None]
    b = b / (s1 * (1 + lambda_d * x[3])) / (s2 * (1 + lambda_d * x[4]))
    k = sum((i + lambda_local * x[8][:, i]) * x[2][:, i] for i in range(s3))[:, None]
    k = k / (s1 * (1 + lambda_d * x[3])) / (s2 * (1 + lambda_d * x[4])) / (s3 * (1 + lambda_d * x[5]))
    return (a + b + k) * V
