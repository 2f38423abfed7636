"""Image intake shared by every check and by the upload views: sniff, cap, decode, orient, RGB.

Everything happens in memory; nothing is written to disk.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from checks.results import gettext_noop

MAX_BYTES = 10 * 1024 * 1024
MAX_PIXELS = 25_000_000
MIN_SIDE = 32
# The most pixels one byte of each format can honestly stand for. A picture of one flat colour, the most
# compressible one a camera or an encoder can produce, measured at 4999x5000: JPEG 170 pixels a byte
# (progressive, optimised), PNG 300 (8032 for 1-bit), lossless WebP 24,457. A file claiming more pixels
# than this for its size is a lying header (issue 28: 632 bytes claiming 25 megapixels cost the analysis
# worker seconds of CPU to decode into nothing) and is refused from its header, before any decode.
MAX_PIXELS_PER_BYTE = {"JPEG": 1_000, "PNG": 10_000, "WEBP": 30_000}
# Decoding stops at this many pixels: a larger JPEG is decoded reduced (libjpeg's DCT scaling, "draft"
# mode, by a power of two), which costs a fraction of a full decode and is more than any check reads.
MAX_DECODED_PIXELS = 12_000_000

# Errors Pillow raises for damaged, truncated or hostile files while opening or decoding.
_DECODE_ERRORS = (
    UnidentifiedImageError,
    Image.DecompressionBombError,
    OSError,
    SyntaxError,
    ValueError,
    EOFError,
    IndexError,
    KeyError,
    TypeError,
    MemoryError,
)

MESSAGE_EMPTY = gettext_noop("The upload is empty. Take a new picture and try again.")
MESSAGE_TOO_MANY_BYTES = gettext_noop("The picture is larger than 10 MB. Take a new picture or choose a smaller one.")
MESSAGE_NOT_AN_IMAGE = gettext_noop("This file is not a picture we can read. Use a JPEG, PNG or WebP photo.")
MESSAGE_TOO_MANY_PIXELS = gettext_noop("The picture is larger than 25 megapixels. Use a smaller photo.")
MESSAGE_TOO_SMALL = gettext_noop("The picture is too small. Take a new picture with the camera closer.")
MESSAGE_DAMAGED = gettext_noop("The picture is damaged or incomplete. Take a new picture and try again.")


class ImageRejected(Exception):
    """The bytes are not a usable picture; ``message`` is safe to show to the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def sniff_format(data: bytes) -> str | None:
    """Name the Pillow format the bytes start like ("JPEG", "PNG", "WEBP"), or None."""
    if data[:3] == b"\xff\xd8\xff":
        return "JPEG"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "PNG"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


@dataclass(frozen=True)
class ImageHeader:
    """What a picture's header says, read without decoding a single pixel."""

    format: str
    width: int
    height: int

    @property
    def pixels(self) -> int:
        return self.width * self.height


def _open_lazily(data: bytes) -> Image.Image:
    """Sniff, cap and open: Pillow reads the header only (size, mode), the pixels wait for load()."""
    if not data:
        raise ImageRejected(MESSAGE_EMPTY)
    if len(data) > MAX_BYTES:
        raise ImageRejected(MESSAGE_TOO_MANY_BYTES)
    image_format = sniff_format(data)
    if image_format is None:
        raise ImageRejected(MESSAGE_NOT_AN_IMAGE)
    try:
        image = Image.open(io.BytesIO(data), formats=[image_format])
    except Image.DecompressionBombError as error:
        raise ImageRejected(MESSAGE_TOO_MANY_PIXELS) from error
    except _DECODE_ERRORS as error:
        raise ImageRejected(MESSAGE_NOT_AN_IMAGE) from error
    # The header gives the size before any pixel is decoded: refuse bombs here, below Pillow's
    # own (much larger) limit, so a small file can never expand into gigabytes of memory.
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise ImageRejected(MESSAGE_TOO_MANY_PIXELS)
    if min(width, height) < MIN_SIDE:
        raise ImageRejected(MESSAGE_TOO_SMALL)
    if width * height > len(data) * MAX_PIXELS_PER_BYTE[image_format]:
        raise ImageRejected(MESSAGE_DAMAGED)
    return image


def read_header(data: bytes) -> ImageHeader:
    """Format and size of an uploaded picture, or ImageRejected; costs microseconds whatever the picture claims.

    This is all the web side checks: decoding (hundreds of milliseconds for a large or lying
    picture) happens in the analysis worker, where a damaged picture is a retake.
    """
    image = _open_lazily(bytes(data))
    return ImageHeader(format=image.format, width=image.size[0], height=image.size[1])


def open_image(data: bytes) -> Image.Image:
    """Decode an uploaded JPEG, PNG or WebP into an upright RGB image, or raise ImageRejected."""
    image = _open_lazily(bytes(data))
    try:
        _reduce_while_decoding(image)
        image.load()
    except _DECODE_ERRORS as error:
        raise ImageRejected(MESSAGE_DAMAGED) from error
    image = _upright(image)
    try:
        return _to_rgb(image)
    except _DECODE_ERRORS as error:
        raise ImageRejected(MESSAGE_DAMAGED) from error


def _reduce_while_decoding(image: Image.Image) -> None:
    """A JPEG over MAX_DECODED_PIXELS is decoded at the first scale (1/2, 1/4, 1/8) that brings it under."""
    width, height = image.size
    if image.format != "JPEG" or width * height <= MAX_DECODED_PIXELS:
        return
    scale = 2
    while scale < 8 and -(-width // scale) * -(-height // scale) > MAX_DECODED_PIXELS:
        scale *= 2
    image.draft(image.mode, (-(-width // scale), -(-height // scale)))


def _upright(image: Image.Image) -> Image.Image:
    try:
        return ImageOps.exif_transpose(image)
    except _DECODE_ERRORS:
        # A malformed EXIF block only costs us the orientation hint, not the picture.
        return image


def _to_rgb(image: Image.Image) -> Image.Image:
    if image.mode == "RGB":
        return image
    if image.mode.startswith("I"):
        # 16-bit greyscale PNGs: scale to 8 bits instead of letting convert() clip them white.
        pixels = np.asarray(image, dtype=np.float64)
        return Image.fromarray(np.clip(pixels / 257.0, 0, 255).astype(np.uint8), "L").convert("RGB")
    if image.mode == "F":
        pixels = np.asarray(image, dtype=np.float64)
        return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L").convert("RGB")
    has_alpha = image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or (image.mode == "P" and "transparency" in image.info)
    if has_alpha:
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")
