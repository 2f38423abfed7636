"""Pictures crafted to cost a decoder far more than their bytes (issue 45, W1), built in memory for tests and bench.

Each passes the bytes-per-pixel floor of checks.images; what makes it costly is its dimensions, its bit
depth or the number of scans the decoder must work through.
"""

from __future__ import annotations

import io
import re
import struct
import zlib

import numpy as np
from PIL import Image


def _encoded(image: Image.Image, image_format: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=image_format, **options)
    return buffer.getvalue()


def lossless_webp(width: int = 5000, height: int = 5000) -> bytes:
    """About 1 KB of lossless WebP of one colour, claiming 25 megapixels."""
    return _encoded(Image.new("RGB", (width, height), (120, 90, 60)), "WEBP", lossless=True)


def flat_png(width: int = 5000, height: int = 5000, mode: str = "RGBA") -> bytes:
    """A PNG of one colour: tens of kilobytes for 25 megapixels."""
    return _encoded(Image.new(mode, (width, height), (200, 150, 120, 255)[: len(mode)]), "PNG", compress_level=9)


def grey16_png(width: int = 5000, height: int = 5000) -> bytes:
    """A 16-bit greyscale PNG of one shade: about 50 KB, 25 megapixels of 16-bit samples."""
    return _encoded(Image.fromarray(np.full((height, width), 32768, dtype=np.uint16)), "PNG", compress_level=9)


def deep_rgba_png(width: int = 5000, height: int = 5000) -> bytes:
    """A 16-bit RGBA PNG of one colour, written by hand (Pillow writes no 16-bit RGBA): 200 MB of samples."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    row = b"\0" + struct.pack(">4H", 40000, 30000, 20000, 65535) * width
    header = struct.pack(">IIBBBBB", width, height, 16, 6, 0, 0, 0)
    compressor = zlib.compressobj(9)
    rows = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def odd_width_jpeg(width: int = 4999, height: int = 5000) -> bytes:
    """A JPEG of one colour whose width is odd: Pillow's draft then picked the scale 1 (a full decode)."""
    return _encoded(Image.new("RGB", (width, height), (120, 90, 60)), "JPEG", quality=30)


_MARKER = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")


def jpeg_scans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each scan (its SOS segment and entropy-coded data) of a JPEG, in order."""
    scans, position = [], 2
    while position < len(data) - 3:
        marker = data[position + 1]
        if marker == 0xD9:
            break
        length = int.from_bytes(data[position + 2 : position + 4], "big")
        if marker != 0xDA:
            position += 2 + length
            continue
        found = _MARKER.search(data, position + 2 + length)
        end = found.start() if found else len(data)
        scans.append((position, end))
        position = end
    return scans


def repeated_scan_jpeg(width: int = 5000, height: int = 5000, repeats: int = 1000, *, luma: bool = False) -> bytes:
    """A progressive JPEG of one colour whose smallest scan (of the luma, the component with the most blocks,
    if `luma`) is repeated `repeats` times before its end: each repeat is a few bytes, and makes the
    decoder walk every block of its component again (1,000 repeats at 5000x5000: 240 KB)."""
    data = _encoded(Image.new("RGB", (width, height), (120, 90, 60)), "JPEG", quality=90, progressive=True)
    scans = jpeg_scans(data)
    if luma:  # a scan header names its components after its length and count: luma alone is b"\x01\x01"
        scans = [(start, end) for start, end in scans if data[start + 4 : start + 6] == b"\x01\x01"]
    start, end = min(scans, key=lambda scan: scan[1] - scan[0])
    end_of_image = data.rindex(b"\xff\xd9")
    return data[:end_of_image] + data[start:end] * repeats + data[end_of_image:]
