"""The passive veto: minivision's MiniFASNet anti-spoofing models on a frontal frame (docs/pad.md).

Two small networks (MiniFASNetV2 on the face box scaled 2.7, MiniFASNetV1SE scaled 4.0) each say whether
an 80x80 crop shows a real face or a spoof (a print, a screen). The files are vendored in
checks/models/minifasnet/ (Apache-2.0; source, commit and checksums in its SOURCE.md) and run with
onnxruntime; nothing is downloaded. The preprocessing is upstream's (yakhyo/face-anti-spoofing,
scripts/onnx_inference.py, itself minivision's): the face box, widened by the model's scale but kept
inside the picture, cut out and resized to 80x80 with OpenCV's bilinear rule, BGR, 0-255, no
normalisation; the real class is output 1 of the softmax. As upstream, the two models' real
probabilities are averaged.

Our face box is dlib's HOG box (checks.faces), tighter than the RetinaFace box upstream crops from:
it is widened by BOX_TO_DETECTOR first, so the models see about the context they were trained on.
The threshold (PASSIVE_THRESHOLD) is the one `manage.py calibrate_pad passive` prints for a BPCER in
the 2-5 % band on bona fide face photos; its known weaknesses (prints without paper edges, OLED replays
scoring as real) are upstream's public issues.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np
from PIL import Image

MODELS_DIR = Path(__file__).resolve().parent / "models" / "minifasnet"
# file, crop scale (upstream's README), sha256 of the vendored file (tests/checks/test_passive.py checks them)
MODELS = (
    ("MiniFASNetV2.onnx", 2.7, "4eed38f0bde33c9b805942a5f25e42ce1161e2bda545254be622be957727794e"),
    ("MiniFASNetV1SE.onnx", 4.0, "d819a69bac6b9ade2a0f4d9b60b618e1260f7bf3ba1fddff6c5d82131cb1083f"),
)
INPUT_SIZE = 80
REAL_CLASS = 1
# dlib's HOG box spans brows to upper lip; RetinaFace's spans forehead to chin, about this much larger.
BOX_TO_DETECTOR = 1.25
# The median real probability under which the frontal frames are a spoof: what `manage.py calibrate_pad
# passive faces-dev faces-aaf --per-directory 1500 --target 0.035` printed (chosen on half of 2,914 bona fide
# photos; BPCER 3.5 % [2.6, 4.6] on the other half). docs/pad.md has its output.
PASSIVE_THRESHOLD = 0.0047


def model_digest(name: str) -> str:
    return hashlib.sha256((MODELS_DIR / name).read_bytes()).hexdigest()


class PassiveModels:
    def __init__(self) -> None:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # as checks.faces: several workers share few cores
        options.inter_op_num_threads = 1
        self._sessions = []
        for name, scale, _ in MODELS:
            session = onnxruntime.InferenceSession(str(MODELS_DIR / name), options, providers=["CPUExecutionProvider"])
            self._sessions.append((session, session.get_inputs()[0].name, scale))

    def real_probability(self, picture: Image.Image, box: tuple[float, float, float, float]) -> float:
        """The models' mean probability that the face in `box` (left, top, right, bottom, in the
        picture's pixels) is a real face in front of the camera."""
        pixels = np.asarray(picture.convert("RGB"), dtype=np.uint8)[:, :, ::-1]  # BGR, as upstream (OpenCV)
        left, top, right, bottom = box
        width, height = (right - left) * BOX_TO_DETECTOR, (bottom - top) * BOX_TO_DETECTOR
        centre_x, centre_y = (left + right) / 2, (top + bottom) / 2
        box_xywh = (int(centre_x - width / 2), int(centre_y - height / 2), int(width), int(height))
        probabilities = []
        for session, input_name, scale in self._sessions:
            crop = crop_face(pixels, box_xywh, scale)
            tensor = crop.astype(np.float32).transpose(2, 0, 1)[None]
            logits = session.run(None, {input_name: tensor})[0][0].astype(np.float64)
            exp = np.exp(logits - logits.max())
            probabilities.append(float(exp[REAL_CLASS] / exp.sum()))
        return float(np.mean(probabilities))


def crop_face(pixels: np.ndarray, box_xywh: tuple[int, int, int, int], scale: float) -> np.ndarray:
    """Upstream's crop (utils.crop_face): the box scaled about its centre, kept in the picture, resized to 80x80."""
    src_h, src_w = pixels.shape[:2]
    x, y, box_w, box_h = box_xywh
    box_w, box_h = max(box_w, 1), max(box_h, 1)
    scale = min((src_h - 1) / box_h, (src_w - 1) / box_w, scale)
    new_w, new_h = box_w * scale, box_h * scale
    centre_x, centre_y = x + box_w / 2, y + box_h / 2
    x1 = max(0, int(centre_x - new_w / 2))
    y1 = max(0, int(centre_y - new_h / 2))
    x2 = min(src_w - 1, int(centre_x + new_w / 2))
    y2 = min(src_h - 1, int(centre_y + new_h / 2))
    return resize_linear(pixels[y1 : y2 + 1, x1 : x2 + 1], INPUT_SIZE, INPUT_SIZE)


def resize_linear(pixels: np.ndarray, out_w: int, out_h: int) -> np.ndarray:
    """cv2.resize(..., INTER_LINEAR): bilinear sampling at pixel centres, no antialiasing, uint8 rounded.

    Pillow's bilinear filter averages on reduction, which smooths away the moire and print texture the
    models look for; this follows OpenCV, which the models were trained through.
    """
    src_h, src_w = pixels.shape[:2]

    def axis(out: int, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        position = np.clip((np.arange(out) + 0.5) * (size / out) - 0.5, 0, size - 1)
        low = np.floor(position).astype(int)
        high = np.minimum(low + 1, size - 1)
        return low, high, position - low

    y0, y1, wy = axis(out_h, src_h)
    x0, x1, wx = axis(out_w, src_w)
    # Only the sampled pixels are made floats (the crop can be the whole frame).
    rows_low, rows_high = pixels[y0], pixels[y1]
    top = rows_low[:, x0].astype(np.float64) * (1 - wx)[None, :, None] + rows_low[:, x1] * wx[None, :, None]
    bottom = rows_high[:, x0].astype(np.float64) * (1 - wx)[None, :, None] + rows_high[:, x1] * wx[None, :, None]
    result = top * (1 - wy)[:, None, None] + bottom * wy[:, None, None]
    return np.clip(np.rint(result), 0, 255).astype(np.uint8)


_models: PassiveModels | None = None
_models_lock = threading.Lock()


def passive_models() -> PassiveModels:
    """The process-wide models, loaded on first use and kept."""
    global _models
    if _models is None:
        with _models_lock:
            if _models is None:
                _models = PassiveModels()
    return _models
