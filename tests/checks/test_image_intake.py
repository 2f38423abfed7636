"""checks.images.open_image: what an upload must be to reach a model."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from checks.images import MAX_BYTES, ImageRejected, open_image, read_header


def _encoded(image: Image.Image, image_format: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=image_format, **options)
    return buffer.getvalue()


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


@pytest.mark.parametrize("image_format", ["JPEG", "PNG", "WEBP"])
def test_jpeg_png_and_webp_are_decoded_to_rgb(image_format):
    picture = Image.new("L", (64, 48), 128)

    image = open_image(_encoded(picture, image_format))

    assert image.mode == "RGB"
    assert image.size == (64, 48)


def test_exif_orientation_is_applied():
    picture = Image.new("RGB", (80, 40), (200, 10, 10))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display

    image = open_image(_encoded(picture, "JPEG", exif=exif.tobytes()))

    assert image.size == (40, 80)


def test_transparent_png_is_flattened_on_white():
    picture = Image.new("RGBA", (40, 40), (0, 0, 0, 0))

    image = open_image(_encoded(picture, "PNG"))

    assert image.getpixel((20, 20)) == (255, 255, 255)


def test_sixteen_bit_greyscale_png_is_scaled_not_clipped():
    picture = Image.fromarray(np.full((40, 40), 32768, dtype=np.uint16))

    image = open_image(_encoded(picture, "PNG"))

    assert image.getpixel((0, 0))[0] in (127, 128)


def test_non_image_renamed_jpg_is_rejected():
    with pytest.raises(ImageRejected, match="not a picture"):
        open_image(b"%PDF-1.7\n" + b"x" * 2000)


def test_jpeg_magic_with_garbage_after_it_is_rejected():
    with pytest.raises(ImageRejected):
        open_image(b"\xff\xd8\xff\xe0" + bytes(range(256)) * 20)


def test_decompression_bomb_is_rejected_before_decoding():
    # A valid PNG header announcing 50,000 x 50,000 pixels in a file of a few hundred bytes.
    header = _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 50_000, 50_000, 8, 0, 0, 0, 0))
    bomb = b"\x89PNG\r\n\x1a\n" + header + _png_chunk(b"IDAT", zlib.compress(b"\0" * 50_001)) + _png_chunk(b"IEND", b"")

    with pytest.raises(ImageRejected, match="25 megapixels"):
        open_image(bomb)


def test_picture_over_25_megapixels_is_rejected():
    bomb = _encoded(Image.new("1", (6000, 5000)), "PNG")  # 30 MP, a few kB compressed

    with pytest.raises(ImageRejected, match="25 megapixels"):
        open_image(bomb)


def test_upload_over_10_mb_is_rejected():
    with pytest.raises(ImageRejected, match="10 MB"):
        open_image(b"\xff\xd8\xff" + b"\0" * MAX_BYTES)


def test_truncated_jpeg_is_rejected(astronaut_jpeg):
    with pytest.raises(ImageRejected, match="damaged or incomplete"):
        open_image(astronaut_jpeg[: len(astronaut_jpeg) // 2])


def test_empty_upload_is_rejected():
    with pytest.raises(ImageRejected, match="empty"):
        open_image(b"")


def test_tiny_picture_is_rejected():
    with pytest.raises(ImageRejected, match="too small"):
        open_image(_encoded(Image.new("RGB", (8, 8)), "PNG"))


@pytest.mark.parametrize(
    ("image_format", "options"),
    [("JPEG", {"quality": 95, "progressive": True, "optimize": True}), ("PNG", {}), ("WEBP", {"lossless": True})],
)
def test_a_large_picture_of_one_colour_is_not_taken_for_a_lying_one(image_format, options):
    buffer = io.BytesIO()
    Image.new("RGB", (4999, 5000), (120, 90, 60)).save(buffer, image_format, **options)

    assert read_header(buffer.getvalue()).pixels == 4999 * 5000


def test_a_jpeg_with_too_few_bytes_for_the_pixels_its_header_claims_is_refused_from_the_header():
    from bench.upload_flood import lying_jpeg

    with pytest.raises(ImageRejected, match="damaged or incomplete"):
        read_header(lying_jpeg())


def test_a_jpeg_over_12_megapixels_is_decoded_reduced_not_in_full():
    noise = np.random.default_rng(3).integers(0, 256, size=(4000, 4000, 3), dtype=np.uint8)
    data = _encoded(Image.fromarray(noise), "JPEG", quality=30)

    image = open_image(data)

    assert image.size == (2000, 2000) and image.mode == "RGB"
