"""checks.images.open_image: what an upload must be to reach a model."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from checks.images import MAX_BYTES, ImageRejected, decoded_once, open_image, read_header
from tests.support import crafted_pictures


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
    ("image_format", "options", "size"),
    [
        ("JPEG", {"quality": 95, "progressive": True, "optimize": True}, (4999, 5000)),
        ("PNG", {}, (4999, 5000)),
        ("WEBP", {"lossless": True}, (4000, 3000)),  # the largest WebP the decode budget lets through
    ],
)
def test_a_large_picture_of_one_colour_is_not_taken_for_a_lying_one(image_format, options, size):
    buffer = io.BytesIO()
    Image.new("RGB", size, (120, 90, 60)).save(buffer, image_format, **options)

    assert read_header(buffer.getvalue()).pixels == size[0] * size[1]


def test_a_jpeg_with_too_few_bytes_for_the_pixels_its_header_claims_is_refused_from_the_header():
    from bench.upload_flood import lying_jpeg

    with pytest.raises(ImageRejected, match="damaged or incomplete"):
        read_header(lying_jpeg())


def test_a_jpeg_over_12_megapixels_is_decoded_reduced_not_in_full():
    noise = np.random.default_rng(3).integers(0, 256, size=(4000, 4000, 3), dtype=np.uint8)
    data = _encoded(Image.fromarray(noise), "JPEG", quality=30)

    image = open_image(data)

    assert image.size == (2000, 2000) and image.mode == "RGB"


# --- pictures that cost more than they weigh (issue 45, W1) ---------------------------------------------------
# Each is built here and passes the bytes-per-pixel floor: it is refused from its header with the reason, or
# decoded reduced. What each costs in CPU and memory is printed by bench/analysis_flood.py --costs.


def test_a_lossless_webp_of_1_kb_claiming_25_megapixels_is_refused_from_its_header_as_too_complex():
    data = crafted_pictures.lossless_webp(5000, 5000)
    assert len(data) < 1_100

    with pytest.raises(ImageRejected, match="too complex to check"):
        read_header(data)


def test_a_small_png_of_25_megapixels_is_decoded_reduced_to_the_colour_it_holds():
    data = crafted_pictures.flat_png(5000, 5000, "RGBA")
    assert len(data) < 120_000

    image = open_image(data)

    assert image.size == (2500, 2500) and image.mode == "RGB"
    assert image.getpixel((1234, 2345)) == (200, 150, 120)


def test_a_sixteen_bit_rgba_png_of_25_megapixels_is_refused_from_its_header_for_its_bit_depth():
    data = crafted_pictures.deep_rgba_png(5000, 5000)
    assert len(data) < 400_000

    with pytest.raises(ImageRejected, match="too complex to check"):
        read_header(data)


def test_a_sixteen_bit_grey_png_of_25_megapixels_is_decoded_reduced_and_scaled_not_clipped():
    data = crafted_pictures.grey16_png(5000, 5000)  # 32768 everywhere
    assert len(data) < 70_000

    image = open_image(data)

    assert image.size == (2500, 2500)
    assert image.getpixel((2000, 100)) in ((127, 127, 127), (128, 128, 128))


@pytest.mark.parametrize("size", [(4999, 5000), (5000, 4999), (4999, 4999)])
def test_a_jpeg_with_an_odd_side_over_12_megapixels_is_decoded_reduced_not_in_full(size):
    data = crafted_pictures.odd_width_jpeg(*size)

    image = open_image(data)

    assert image.size == ((size[0] + 1) // 2, (size[1] + 1) // 2)
    assert image.getpixel((100, 100)) == pytest.approx((120, 90, 60), abs=3)


def test_a_progressive_jpeg_repeating_a_scan_hundreds_of_times_is_refused_from_its_header():
    data = crafted_pictures.repeated_scan_jpeg(2000, 2000, repeats=200)

    with pytest.raises(ImageRejected, match="too complex to check"):
        read_header(data)


def test_a_progressive_jpeg_repeating_its_luma_scan_is_refused_for_the_blocks_it_would_walk():
    # 40 scans, fewer than any limit on their number, but each repeat walks 390,625 blocks again.
    data = crafted_pictures.repeated_scan_jpeg(5000, 5000, repeats=30, luma=True)

    with pytest.raises(ImageRejected, match="too complex to check"):
        read_header(data)


def test_a_progressive_jpeg_repeating_a_scan_within_the_budget_is_decoded_reduced():
    data = crafted_pictures.repeated_scan_jpeg(5000, 5000, repeats=80)

    image = open_image(data)

    assert image.size == (2500, 2500)
    assert image.getpixel((100, 100)) == pytest.approx((120, 90, 60), abs=3)


def test_an_ordinary_progressive_photo_of_12_megapixels_is_decoded_whole():
    noise = np.random.default_rng(11).integers(0, 256, size=(3000, 4000, 3), dtype=np.uint8)
    data = _encoded(Image.fromarray(noise), "JPEG", quality=70, progressive=True)

    image = open_image(data)

    assert image.size == (4000, 3000)
    assert np.array_equal(np.asarray(image), np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))


def test_within_an_analysis_each_picture_is_decoded_once_and_shared_by_the_checks():
    data = crafted_pictures.odd_width_jpeg(4999, 5000)

    with decoded_once():
        first, again = open_image(data), open_image(data)
        other = open_image(_encoded(Image.new("RGB", (64, 48), 128), "PNG"))
    after = open_image(data)

    assert again is first and other is not first
    assert after is not first and after.tobytes() == first.tobytes()
