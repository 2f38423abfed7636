"""Pictures as the flow's upload pages receive them: small JPEGs, a decompression bomb, selfie and document forms."""

import functools
import io
import struct
import zlib

import numpy as np
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image


def jpeg(width=64, height=64, *, noise=False) -> bytes:
    if noise:
        pixels = np.random.default_rng(1).integers(0, 256, size=(height, width, 3), dtype=np.uint8)
        image = Image.fromarray(pixels)
    else:
        image = Image.new("RGB", (width, height), (180, 140, 120))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=95)
    return buffer.getvalue()


@functools.cache
def png_bomb(width=6_000, height=5_000) -> bytes:
    """A valid greyscale PNG of zeros: about 30 KB on the wire, 30 megapixels once decoded."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    compressor = zlib.compressobj(9)
    row = b"\x00" * (width + 1)  # filter byte + one byte per pixel
    idat = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def upload(name: str, data: bytes, content_type="image/jpeg"):
    return SimpleUploadedFile(name, data, content_type=content_type)


def post_document(visitor, data: bytes, name="passport.jpg", *, head_turns: bool = True):
    """The document page's form: the document and, as the presence policy asks, the head turns (blank frames)."""
    form = head_turns_form(visitor, page="/flow/document") if head_turns else {}
    return visitor.client.post("/flow/document", {**form, "document": upload(name, data)})


def head_turns_form(
    visitor, frames_per_step=3, *, page: str = "/flow/selfie", data_for=lambda index, step: jpeg()
) -> dict:
    """The head-turn fields of the page's form, for the challenge that showing the page issued."""
    visitor.client.get(page)
    challenge = visitor.session.liveness_challenge
    form = {"challenge": ",".join(challenge)}
    for index, step in enumerate(challenge):
        form[f"frame_{index}_{step}"] = [
            upload(f"{step}-{n}.jpg", data_for(index, step)) for n in range(frames_per_step)
        ]
    return form


def selfie_form(visitor, frames_per_step=3, *, data_for=lambda index, step: jpeg()) -> dict:
    return head_turns_form(visitor, frames_per_step, data_for=data_for)
