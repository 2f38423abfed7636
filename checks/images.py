"""Image intake shared by every check and by the upload views: sniff, cap, decode, orient, RGB.

Everything happens in memory; nothing is written to disk. A picture is refused from its header when its
decode would cost more than its format's budget (checks.image_cost), and decoded in a child process held
to a CPU and a memory limit (checks.confined), so that what the estimate misses stops there too.
"""

from __future__ import annotations

import hashlib
import io
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from checks.confined import OverBudget, run_confined
from checks.image_cost import CostUnknown, decode_cost
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
# mode, by a power of two), which costs a fraction of a full decode and is more than any check reads; a
# larger PNG or WebP is reduced by the same factor right after its decode, before any conversion.
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
)

MESSAGE_EMPTY = gettext_noop("The upload is empty. Take a new picture and try again.")
MESSAGE_TOO_MANY_BYTES = gettext_noop("The picture is larger than 10 MB. Take a new picture or choose a smaller one.")
MESSAGE_NOT_AN_IMAGE = gettext_noop("This file is not a picture we can read. Use a JPEG, PNG or WebP photo.")
MESSAGE_TOO_MANY_PIXELS = gettext_noop("The picture is larger than 25 megapixels. Use a smaller photo.")
MESSAGE_TOO_SMALL = gettext_noop("The picture is too small. Take a new picture with the camera closer.")
MESSAGE_DAMAGED = gettext_noop("The picture is damaged or incomplete. Take a new picture and try again.")
MESSAGE_TOO_COSTLY = gettext_noop(
    "The picture is too complex to check (too many pixels, passes or bits for its kind). "
    "Take a new picture with the camera, or save it as an ordinary JPEG."
)


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
    try:
        cost = decode_cost(data, image_format, width, height)
    except CostUnknown as error:
        raise ImageRejected(MESSAGE_DAMAGED) from error
    if cost.over_budget:
        raise ImageRejected(MESSAGE_TOO_COSTLY)
    return image


def read_header(data: bytes) -> ImageHeader:
    """Format and size of an uploaded picture, or ImageRejected (a lying header, or a decode over its format's
    budget); costs at most milliseconds whatever the picture claims (a JPEG's markers are walked, not decoded).

    This is all the web side checks: decoding (hundreds of milliseconds for a large picture) happens in the
    analysis worker, where a damaged picture is a retake.
    """
    image = _open_lazily(bytes(data))
    return ImageHeader(format=image.format, width=image.size[0], height=image.size[1])


# Digests of the last pictures whose decode ran out of budget: the document check, the printed dates and
# the portrait each decode the same bytes, and such a picture costs its budget once, not three times.
_OVER_BUDGET: OrderedDict[bytes, None] = OrderedDict()
_OVER_BUDGET_KEPT = 64


_DECODED: ContextVar[dict[bytes, Image.Image] | None] = ContextVar("decoded_pictures", default=None)
_DERIVED: ContextVar[dict | None] = ContextVar("derived_from_pictures", default=None)


@contextmanager
def decoded_once() -> Iterator[None]:
    """Within it, open_image decodes each distinct picture once and hands the same image to every check that asks
    (an analysis reads a document, its printed dates and its portrait from the same bytes); the pixels are
    dropped when it ends. The images are shared: no check changes one in place, so what a check derives from
    one may be kept for the others as long (derived_memo)."""
    token, derived = _DECODED.set({}), _DERIVED.set({})
    try:
        yield
    finally:
        _DERIVED.reset(derived)
        _DECODED.reset(token)


def derived_memo() -> dict | None:
    """Within decoded_once, a dict where checks keep what they derived from its pictures until it ends (the face
    detections liveness found, which the age estimate reads again); None outside, where nothing is kept."""
    return _DERIVED.get()


def read_once(kind: str, arrays: Sequence[np.ndarray], read: Callable[[list[np.ndarray]], Sequence]) -> list:
    """`read`'s answer for each array, the arrays not yet read in one call: within decoded_once an array read
    once (known by its content) is not read again until it ends; outside, only repeats within the call are
    shared. `read` must answer an array the same alone as in a batch (tests/checks/test_shared_readings.py)."""
    memo = derived_memo()
    memo = {} if memo is None else memo
    keys = [(kind, hashlib.blake2b(np.ascontiguousarray(array).tobytes(), digest_size=16).digest()) for array in arrays]
    missing = {key: array for key, array in zip(keys, arrays, strict=True) if key not in memo}
    if missing:
        for key, answer in zip(missing, read(list(missing.values())), strict=True):
            memo[key] = answer
    return [memo[key] for key in keys]


def open_image(data: bytes) -> Image.Image:
    """Decode an uploaded JPEG, PNG or WebP into an upright RGB image, or raise ImageRejected.

    The header is read here; the pixels are decoded in a confined child (checks.confined), which hands back
    the RGB bytes."""
    data = bytes(data)
    _open_lazily(data)
    digest = hashlib.blake2b(data, digest_size=16).digest()
    if digest in _OVER_BUDGET:
        raise ImageRejected(MESSAGE_TOO_COSTLY)
    decoded = _DECODED.get()
    if decoded is not None and digest in decoded:
        return decoded[digest]
    image = _decode_confined(data, digest)
    if decoded is not None:
        decoded[digest] = image
    return image


def _decode_confined(data: bytes, digest: bytes) -> Image.Image:
    try:
        decoded = run_confined("checks.images:_decode_rgb", data)
    except OverBudget:
        _OVER_BUDGET[digest] = None
        while len(_OVER_BUDGET) > _OVER_BUDGET_KEPT:
            _OVER_BUDGET.popitem(last=False)
        raise ImageRejected(MESSAGE_TOO_COSTLY) from None
    size = (int.from_bytes(decoded[:4], "big"), int.from_bytes(decoded[4:8], "big"))
    return Image.frombytes("RGB", size, decoded[8:])


def _decode_rgb(data: bytes) -> bytes:
    """The decode proper, run in the confined child: the upright RGB picture's size (two 4-byte integers) and
    pixels, or ImageRejected."""
    image = _open_lazily(data)
    try:
        _reduce_while_decoding(image)
        image.load()
        image = _reduced(image)
    except _DECODE_ERRORS as error:
        raise ImageRejected(MESSAGE_DAMAGED) from error
    image = _upright(image)
    try:
        image = _to_rgb(image)
    except _DECODE_ERRORS as error:
        raise ImageRejected(MESSAGE_DAMAGED) from error
    return image.size[0].to_bytes(4, "big") + image.size[1].to_bytes(4, "big") + image.tobytes()


def _reduction(width: int, height: int) -> int:
    """The first scale (1, 2, 4, 8) at which a picture is at most MAX_DECODED_PIXELS."""
    scale = 1
    while scale < 8 and -(-width // scale) * -(-height // scale) > MAX_DECODED_PIXELS:
        scale *= 2
    return scale


def _reduce_while_decoding(image: Image.Image) -> None:
    """A JPEG over MAX_DECODED_PIXELS is decoded at the first scale (1/2, 1/4, 1/8) that brings it under.

    Pillow takes the scale as the smaller of width // asked width and height // asked height, so the size
    asked is rounded down: rounded up, an odd side gave the scale 1, a full decode."""
    width, height = image.size
    scale = _reduction(width, height)
    if image.format == "JPEG" and scale > 1:
        image.draft(image.mode, (width // scale, height // scale))


def _reduced(image: Image.Image) -> Image.Image:
    """A decoded PNG or WebP over MAX_DECODED_PIXELS, reduced by the scale a JPEG is decoded at, before the
    conversions that would copy it whole. (16-bit samples are scaled down first: Pillow reduces 8-bit ones.)"""
    scale = _reduction(*image.size)
    if scale == 1:
        return image
    if image.mode.startswith("I"):
        image = _eight_bit_grey(image)
    return image.reduce(scale)


def _eight_bit_grey(image: Image.Image) -> Image.Image:
    """A 16-bit (or 32-bit) greyscale picture scaled to 8 bits, instead of clipped white by convert().

    In integers, in place: floor(x / 257) is what a division in floats truncated to, and a 25-megapixel
    picture then needs two copies of its samples, not three arrays of float64 (600 MB)."""
    pixels = np.array(image)  # uint16 for I;16, int32 for I
    np.floor_divide(pixels, 257, out=pixels)
    np.clip(pixels, 0, 255, out=pixels)
    return Image.fromarray(pixels.astype(np.uint8), "L")


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
        return _eight_bit_grey(image).convert("RGB")
    if image.mode == "F":
        pixels = np.asarray(image, dtype=np.float64)
        return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L").convert("RGB")
    has_alpha = image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or (image.mode == "P" and "transparency" in image.info)
    if has_alpha:
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")
