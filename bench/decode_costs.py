"""Decode costs (issue 45, W1): what each crafted picture, and each ordinary one, costs the analysis worker.

Run by hand:  .venv/bin/python bench/decode_costs.py

For each picture (the crafted ones of tests/support/crafted_pictures.py, then a passport page and a camera
frame), in a fresh process with the models loaded as in a worker: whether the web side refuses it from its
header (checks.images.read_header) and why; else the decode in its confined child (checks.confined): the
child's CPU seconds and its peak memory above its size before the call, and the wall time of the decode
against the same decode in the worker's own process (the hand-over's cost); then the CPU of the document
checks on it (reading, the portrait; tesseract and the decoding child included) as the worker runs them,
with one decode. The targets: no crafted picture's decode over 2 s of CPU or 256 MB, ordinary pictures
decoded as before at a few milliseconds' overhead.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def crafted() -> dict[str, tuple[str, Callable[[], bytes]]]:
    """The crafted pictures by short name (bench/analysis_flood.py --pictures): (what it is, its builder)."""
    from bench.upload_flood import lying_jpeg
    from tests.support import crafted_pictures as built

    return {
        "lying-jpeg": ("lying JPEG, 632 B claiming 4999x5000 (issue 28)", lying_jpeg),
        "webp-25mp": ("lossless WebP of one colour, 5000x5000", lambda: built.lossless_webp(5000, 5000)),
        "webp-12mp": ("lossless WebP of one colour, 4000x3000", lambda: built.lossless_webp(4000, 3000)),
        "png-25mp": ("PNG RGBA of one colour, 5000x5000", lambda: built.flat_png(5000, 5000, "RGBA")),
        "png-grey16": ("PNG 16-bit grey, 5000x5000", lambda: built.grey16_png(5000, 5000)),
        "png-rgba16": ("PNG 16-bit RGBA, 5000x5000", lambda: built.deep_rgba_png(5000, 5000)),
        "jpeg-odd": ("JPEG odd width, 4999x5000", lambda: built.odd_width_jpeg(4999, 5000)),
        "jpeg-scans": (
            "progressive JPEG, smallest scan x1000, 5000x5000",
            lambda: built.repeated_scan_jpeg(5000, 5000, 1000),
        ),
        "jpeg-luma-scans": (
            "progressive JPEG, luma scan x30, 5000x5000",
            lambda: built.repeated_scan_jpeg(5000, 5000, 30, luma=True),
        ),
        "jpeg-scans-80": (
            "progressive JPEG, smallest scan x80, 5000x5000",
            lambda: built.repeated_scan_jpeg(5000, 5000, 80),
        ),
    }


def pictures() -> dict[str, bytes]:
    from bench.upload_flood import camera_frame
    from tests.support.documents import encode, mrz_card, td3_lines

    built = {description: build() for description, build in crafted().values()}
    return {
        **built,
        "passport page (ordinary)": encode(mrz_card(td3_lines(birth="900101", expiry="350101"), dpi=200)),
        "camera frame 640x480 (ordinary)": camera_frame(),
    }


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def cost_of(name: str) -> dict:
    """Measured in this (fresh) process, with the models loaded, through the kernel's counts of the decoding child."""
    from checks.confined import child_usage
    from checks.document import read_document_sides
    from checks.face_match import document_portrait
    from checks.images import ImageRejected, _decode_rgb, decoded_once, open_image, read_header
    from tests.support.documents import encode, mrz_card, td3_lines

    data = pictures()[name]
    result: dict = {"picture": name, "bytes": len(data)}
    try:
        header = read_header(data)
    except ImageRejected as rejected:
        return {**result, "refused_from_header": rejected.message}
    result["size"] = f"{header.width}x{header.height}"
    passport = encode(mrz_card(td3_lines(birth="900101", expiry="350101"), dpi=200))
    read_document_sides([passport]), document_portrait([passport])  # the models and the reader loaded
    child_cpu, child_rss, _ = child_usage()
    started = time.perf_counter()
    try:
        decoded = open_image(data)
        result["decoded"] = f"{decoded.size[0]}x{decoded.size[1]}"
    except ImageRejected as rejected:
        result["refused_by_decoder"] = rejected.message
    result["decode_wall_s"] = round(time.perf_counter() - started, 3)
    usage = child_usage()
    if usage is None:
        result["decoder"] = "stopped by its limits"
    else:
        result["decode_cpu_s"] = round(usage[0] - child_cpu, 3)
        result["decode_peak_mb"] = round((usage[2] - child_rss) / 2**20, 1)
    if "decoded" in result:
        started = time.perf_counter()
        _decode_rgb(data)  # the same decode, in this process: what the hand-over adds
        result["hand_over_s"] = round(result["decode_wall_s"] - (time.perf_counter() - started), 3)
    cpu = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) + (child_usage() or (0,))[0]
    with decoded_once():  # as the analysis worker runs them
        read_document_sides([data])
        document_portrait([data])
    spent = _cpu(resource.RUSAGE_SELF) + _cpu(resource.RUSAGE_CHILDREN) + (child_usage() or (0,))[0] - cpu
    result["document_checks_cpu_s"] = round(spent, 2)
    return result


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--cost-of":
        print(json.dumps(cost_of(sys.argv[2])))
        return
    for name in pictures():
        out = subprocess.run(
            [sys.executable, __file__, "--cost-of", name], cwd=REPO, check=True, capture_output=True, text=True
        )
        print(out.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
