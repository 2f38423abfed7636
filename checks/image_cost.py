"""What decoding a picture will cost, read from its header and markers before a single pixel is decoded.

The bytes-per-pixel floor (checks.images) catches a header that lies about its size; it does not catch a
picture that tells the truth about a costly decode (issue 45): a lossless WebP of one colour claiming
25 megapixels, a 16-bit PNG, a progressive JPEG that repeats a scan of a few bytes thousands of times. The
work each format makes its decoder do is counted here, in that format's own unit, and capped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The most work each format's decoder may be asked for, in that format's unit (see decode_cost), so that
# the heaviest picture let through decodes in well under a second of CPU and 256 MB (checks.confined;
# bench/analysis_flood.py --costs prints both):
#  JPEG: blocks of 8x8 samples walked, summed over the scans. A 5000x5000 JPEG walks 1.2 million blocks
#        baseline, 5.5 million progressive without chroma subsampling (libjpeg's ten scans); the limit is
#        twice that. A scan of a few bytes walks every block of its component again: repeated, it was the
#        audit's 54-second JPEG.
#  PNG:  bytes inflated (a filter byte per row, then the samples at their bit depth): 5000x5000 RGBA at
#        8 bits is 100 million, 16-bit greyscale 50 million; 16-bit RGB(A) at that size is refused.
#  WEBP: bytes decoded, four a pixel: libwebp and Pillow each hold the whole RGBA picture, so 16
#        megapixels (4000x4000) peak at 247 MB, near the memory limit, and 25 do not fit; the limit is 12.
MAX_DECODE_WORK = {"JPEG": 12_000_000, "PNG": 100_020_000, "WEBP": 48_000_000}
# No encoder writes more scans than this for a photo (libjpeg's progressive mode writes 10, mozjpeg's up to
# about 20); each scan costs its set-up even over few blocks.
MAX_JPEG_SCANS = 100

_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # by colour type: grey, RGB, palette, grey+alpha, RGBA
# A marker inside a JPEG's entropy-coded data: 0xFF followed by neither a stuffed 0x00, a restart marker
# (0xD0-0xD7, part of the scan) nor a fill byte.
_JPEG_MARKER = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOF0-SOF15 (not DHT, JPG, DAC)


class CostUnknown(Exception):
    """The markers or chunks the cost is read from are missing or malformed."""


@dataclass(frozen=True)
class DecodeCost:
    format: str
    work: int  # in the format's unit (MAX_DECODE_WORK)
    scans: int = 1

    @property
    def over_budget(self) -> bool:
        return self.work > MAX_DECODE_WORK[self.format] or self.scans > MAX_JPEG_SCANS


def decode_cost(data: bytes, image_format: str, width: int, height: int) -> DecodeCost:
    """The work decoding these bytes (already opened as `image_format`, `width` x `height`) will take."""
    if image_format == "JPEG":
        work, scans = _jpeg_block_scans(data)
        return DecodeCost("JPEG", work, scans)
    if image_format == "PNG":
        return DecodeCost("PNG", _png_inflated_bytes(data, width, height))
    return DecodeCost(image_format, width * height * 4)


def _png_inflated_bytes(data: bytes, width: int, height: int) -> int:
    """Bytes of the inflated image data: a filter byte and the packed samples of each row (Adam7's
    passes add under 1% more)."""
    if data[12:16] != b"IHDR" or len(data) < 29:
        raise CostUnknown("no IHDR chunk")
    depth, colour = data[24], data[25]
    if colour not in _PNG_CHANNELS:
        raise CostUnknown(f"colour type {colour}")
    return height * (1 + _ceil(width * _PNG_CHANNELS[colour] * depth, 8))


def _jpeg_block_scans(data: bytes) -> tuple[int, int]:
    """(blocks of 8x8 samples walked summed over every scan, number of scans), from the frame header and each
    scan's header: a scan walks every block of each component it names, whatever its few bytes hold."""
    blocks: dict[int, int] = {}
    work = scans = 0
    position = 2
    while position + 4 <= len(data):
        if data[position] != 0xFF:
            raise CostUnknown(f"no marker at {position}")
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker == 0xD9:  # end of image
            break
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:  # no length
            position += 2
            continue
        length = int.from_bytes(data[position + 2 : position + 4], "big")
        segment = data[position + 4 : position + 2 + length]
        if marker in _JPEG_FRAMES:
            blocks = _component_blocks(segment)
        elif marker == 0xDA:
            if not blocks or not segment:
                raise CostUnknown("scan before the frame header")
            scans += 1
            named = [segment[1 + 2 * index] for index in range(segment[0]) if 2 + 2 * index <= len(segment)]
            work += sum(blocks.get(component, max(blocks.values())) for component in named)
            found = _JPEG_MARKER.search(data, position + 2 + length)
            position = found.start() if found else len(data)
            continue
        position += 2 + length
    if not scans:
        raise CostUnknown("no scan")
    return work, scans


def _component_blocks(frame: bytes) -> dict[int, int]:
    """Blocks of each component (by id) of a frame header (SOFn), from its sampling factors."""
    if len(frame) < 6:
        raise CostUnknown("short frame header")
    height, width, count = int.from_bytes(frame[1:3], "big"), int.from_bytes(frame[3:5], "big"), frame[5]
    factors = [(frame[6 + 3 * index], frame[7 + 3 * index]) for index in range(count) if 8 + 3 * index <= len(frame)]
    if not factors:
        raise CostUnknown("no component")
    most_h = max(sampling >> 4 for _, sampling in factors) or 1
    most_v = max(sampling & 15 for _, sampling in factors) or 1
    return {
        component: _ceil(_ceil(width * (sampling >> 4), most_h), 8) * _ceil(_ceil(height * (sampling & 15), most_v), 8)
        for component, sampling in factors
    }


def _ceil(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)
