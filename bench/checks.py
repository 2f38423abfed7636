"""Benchmark of the checks package: model load, age estimation, liveness, document reading, holder match.

Run by hand from the repository root:  .venv/bin/python bench/checks.py [--repeat N]
Prints wall-clock and CPU time per call (this process plus its children: tesseract, and the confined
child that decodes every picture, checks.confined, which lives on and so is read from /proc), median and
p95; on a busy machine wall-clock exceeds CPU time. The selfie decisions run as the analysis worker runs
them (sessions_api.analysis), inside checks.images.decoded_once. The targets: the selfie
decision (liveness over a frame sequence + choosing the frontal frames + age estimation, every model, with
the capture record) at most 0.5 s of one core (issue 43),
and the holder match (the document's portrait and the capture's frontal frames, read and compared)
adding at most 0.3 s of one core to a document decision.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

# This file is bench/checks.py: its own folder must not shadow the checks package.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="calls per measurement (default 20)")
    parser.add_argument("--only", default="", help="measure only the lines whose name holds this text")
    arguments = parser.parse_args()
    repeat, only = arguments.repeat, arguments.only

    started_wall, started_cpu = time.perf_counter(), _cpu()
    from checks.faces import face_engine

    face_engine()
    print(
        f"model load (import + detector, landmarks, face-api age network): "
        f"{time.perf_counter() - started_wall:.3f} s wall, {_cpu() - started_cpu:.3f} s CPU"
    )

    import datetime

    from skimage import data

    from checks.age import estimate_age, read_capture
    from checks.document import read_document
    from checks.face_match import document_portrait, face_matcher, holder_match, live_descriptor
    from checks.images import decoded_once
    from checks.liveness import Capture, check_liveness, frontal_frames
    from tests.checks.conftest import jpeg
    from tests.support.documents import aamva_payload, encode, mrz_card, pdf417_card, td1_lines, td3_lines
    from tests.support.faces import astronaut_portrait, challenge_frames
    from tests.support.pad import capture_make

    today = datetime.date(2026, 11, 22)
    selfie = jpeg(data.astronaut())
    challenge = ["left", "center", "right", "center"]
    frames = challenge_frames(challenge)  # 3 frames per step, 480 x 480 JPEG

    def selfie_decision() -> None:
        with decoded_once():
            liveness = check_liveness(frames, challenge)
            assert liveness.is_live
            estimate_age(frontal_frames(frames, challenge))

    # As the page sends it: with its capture record, so timing, the colour flash and the passive veto all run.
    genuine = capture_make("genuine", seed=1)
    record = Capture(
        genuine["camera"],
        tuple(genuine["times"]),
        tuple(genuine["durations"]),
        flash=tuple(genuine["flash"]),
        shown=tuple(genuine["flash"]),
    )

    def recorded_selfie_decision() -> None:
        with decoded_once():
            liveness = check_liveness(genuine["frames"], genuine["challenge"], record)
            assert liveness.is_live and not liveness.signals
            estimate_age(frontal_frames(genuine["frames"], genuine["challenge"]))

    def selfie_decision_keeping_the_live_face() -> None:
        # The face was not enough and the tenant asks for presence: the analysis keeps the capture's live face.
        with decoded_once():
            liveness = check_liveness(genuine["frames"], genuine["challenge"], record)
            assert liveness.is_live and not liveness.signals
            frontal = frontal_frames(genuine["frames"], genuine["challenge"])
            estimate_age(frontal)
            live_descriptor(frontal)

    documents = {
        "document: PDF417 straight": encode(pdf417_card(aamva_payload())),
        "document: PDF417 skewed 5 degrees": encode(pdf417_card(aamva_payload(), skew_degrees=5)),
        "document: MRZ TD1 card (OCR)": encode(mrz_card(td1_lines())),
        "document: MRZ TD3 page (OCR)": encode(mrz_card(td3_lines())),
    }

    measure("age estimation, 512 x 512 selfie", lambda: estimate_age(selfie), repeat, only)
    measure(f"liveness, {len(frames)} frames 480 x 480", lambda: check_liveness(frames, challenge), repeat, only)
    measure("selfie decision: liveness + frontal frames + age", selfie_decision, repeat, only)
    measure("selfie decision with capture record (timing, flash, passive)", recorded_selfie_decision, repeat, only)

    # HOG from the third pyramid level (checks.faces) against the whole pyramid, taking turns call by call: this
    # machine's speed moves within minutes, so the two are compared within one loop.
    engine = face_engine()

    def scanning_every_level() -> None:
        engine._hog = engine._whole_scan  # the instance's attribute hides the method for this call
        try:
            recorded_selfie_decision()
        finally:
            del engine._hog

    measure_in_turns(
        {
            "selfie decision with capture record, HOG the short way": recorded_selfie_decision,
            "  ... HOG over the whole pyramid": scanning_every_level,
        },
        repeat,
        only,
    )
    face_matcher()  # loading is not part of a decision
    # dlib's face descriptor (a chip and its mirror image), as dlib-bin runs the model file and as the service runs
    # the same weights converted to ONNX (scripts/build_face_match_network.py).
    import dlib

    from checks.face_match import model_verify

    chip = astronaut_portrait()[0].resize((150, 150))
    chip_pixels = np.asarray(chip)
    dlib_network = dlib.face_recognition_model_v1(str(model_verify()))
    measure(
        "face descriptor, chip and mirror: dlib-bin",
        lambda: [
            dlib_network.compute_face_descriptor(np.ascontiguousarray(c)) for c in (chip_pixels, chip_pixels[:, ::-1])
        ],
        repeat,
        only,
    )
    measure(
        "face descriptor, chip and mirror: onnxruntime", lambda: face_matcher().descriptors([chip_pixels]), repeat, only
    )
    measure(
        "selfie decision + the live face kept (face not enough)", selfie_decision_keeping_the_live_face, repeat, only
    )
    passport = encode(mrz_card(td3_lines(), portrait=astronaut_portrait()[0]))
    frontal = frontal_frames(frames, challenge)
    # The portrait's half is what a document decision adds when the live face is kept from the selfie; the
    # live half is added too when the head turns come with the document.
    measure(
        "holder match: the portrait's half (document_portrait)", lambda: document_portrait([passport]), repeat, only
    )
    measure(
        f"holder match: the live half ({len(frontal)} frontal frames)", lambda: live_descriptor(frontal), repeat, only
    )

    # With the document, the head turns are judged for liveness anyway (inside one analysis, so their faces are
    # found once): what the holder match adds is the difference.
    def liveness_of_the_head_turns(live_half: bool) -> None:
        with decoded_once():
            check_liveness(frames, challenge)
            if live_half:
                live_descriptor(frontal)

    alone = measure("head turns with the document: liveness", lambda: liveness_of_the_head_turns(False), repeat, only)
    both = measure(
        "head turns with the document: liveness + the live half", lambda: liveness_of_the_head_turns(True), repeat, only
    )
    if alone and both:
        print(f"{'  the live half adds (difference of the medians)':<50} CPU {1000 * (both - alone):7.1f} ms")

    measure(
        f"holder match: both and the score ({len(frontal)} frames)",
        lambda: holder_match(frontal, [passport]),
        repeat,
        only,
    )
    # A selfie whose face is not enough keeps its live face for the document step: read again from the frames
    # (as before issue 44), or from the faces the age estimate found.
    measure(
        "selfie age + live face read again (live_descriptor)",
        lambda: (estimate_age(frontal), live_descriptor(frontal)),
        repeat,
        only,
    )
    measure("selfie age + live face reused (read_capture)", lambda: read_capture(frontal).live_face(), repeat, only)
    for name, image in documents.items():
        ocr = "MRZ" in name
        measure(
            name,
            lambda image=image: read_document(image, today=today),
            max(3, repeat // 4) if ocr else repeat,
            only,
        )


def measure(name: str, call, repeat: int, only: str = "") -> float | None:
    """Prints the call's wall-clock and CPU times; returns its median CPU time (s), None when not measured."""
    if only not in name:
        return None
    call()  # warm-up
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), _cpu()
        call()
        walls.append(time.perf_counter() - wall)
        cpus.append(_cpu() - cpu)
    wall = f"wall median {statistics.median(walls) * 1000:7.1f} ms  p95 {_p95(walls) * 1000:7.1f} ms"
    cpu = f"CPU median {statistics.median(cpus) * 1000:7.1f} ms  p95 {_p95(cpus) * 1000:7.1f} ms"
    print(f"{name:<50} {wall}  | {cpu}  (n={repeat})")
    return statistics.median(cpus)


def measure_in_turns(calls: dict, repeat: int, only: str = "") -> None:
    """Like measure, for several calls taking turns (one of each per round); prints the medians' differences
    from the first."""
    if not any(only in name for name in calls):
        return
    for call in calls.values():
        call()  # warm-up
    cpus = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            cpu = _cpu()
            call()
            cpus[name].append(_cpu() - cpu)
    first = statistics.median(next(iter(cpus.values())))
    for name, values in cpus.items():
        median = statistics.median(values)
        print(
            f"{name:<50} CPU median {median * 1000:7.1f} ms  p95 {_p95(values) * 1000:7.1f} ms  "
            f"(n={repeat}, in turns; {1000 * (median - first):+.1f} ms)"
        )


def _cpu() -> float:
    from checks.confined import child_usage

    times = os.times()
    # os.times counts a child once it has ended; the confined decoder lives on (a new one starts after a
    # failure, its predecessor then counted here), so its time so far is read from the kernel.
    decoder = child_usage()
    return times.user + times.system + times.children_user + times.children_system + (decoder[0] if decoder else 0)


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
