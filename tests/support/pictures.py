"""Encoding pictures for the checks' tests: pixels or a Pillow image to JPEG bytes, in memory."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image


def jpeg(pixels: np.ndarray | Image.Image, quality: int = 92) -> bytes:
    image = pixels if isinstance(pixels, Image.Image) else Image.fromarray(pixels)
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()
