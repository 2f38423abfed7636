"""Presentation attack detection measured: labelled captures through the production liveness check (docs/pad.md).

A capture set is a directory of captures, one sub-directory each, holding `capture.json` and its frames:

    {"kind": "genuine" | "attack",
     "attack": "still_image",            # attacks only: the attack type (any name; one row per name)
     "challenge": ["left", "right", "left", "center"],
     "durations": [3100, 2600, 3800, 2900], # ms per step, as the server issued them
     "camera": "FaceTime HD Camera",        # the camera's label as the page saw it ("" if none)
     "times": [1004, 1980, ...],            # ms since Start per frame, in frame order; null: photo upload
     "flash": ["red", "blue", ...],         # the screen colour per frame the server issued; absent: none
     "shown": ["red", "blue", ...],         # the colour per frame the page reported showing (default: flash)
     "frames": [["left", "000.jpg"], ...],  # step and file, in capture order
     "consent": "C-2026-001"}               # the consent record (genuine and attack both need one)

Each capture is judged as the service judges it (checks.liveness.check_liveness, default refusals).
An attack counts as accepted when the check says live; a genuine capture counts as refused when the
check says not live or asks for a retake (a retake is reported too: ISO/IEC 30107-3 would count it as
a failure to acquire, here it is the user's cost all the same).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .statistics import clopper_pearson_interval

GENUINE = "genuine"


class CaptureSetInvalid(Exception):
    pass


@dataclass
class Tally:
    total: int = 0
    wrong: int = 0  # accepted attacks, or refused genuine captures
    retakes: int = 0
    signals: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def capture_dirs(directory: Path) -> list[Path]:
    found = sorted(path.parent for path in Path(directory).rglob("capture.json"))
    if not found:
        raise CaptureSetInvalid(f"no capture.json under {directory}")
    return found


def capture_read(path: Path) -> dict:
    try:
        record = json.loads((path / "capture.json").read_text())
        kind = record["kind"]
        if kind not in (GENUINE, "attack") or (kind == "attack" and not record.get("attack")):
            raise ValueError('kind is "genuine" or "attack" (with "attack": its type)')
        frames = [(str(step), (path / name).read_bytes()) for step, name in record["frames"]]
        return {
            "type": GENUINE if kind == GENUINE else str(record["attack"]),
            "challenge": [str(step) for step in record["challenge"]],
            "durations": [int(ms) for ms in record.get("durations") or []],
            "camera": str(record.get("camera") or ""),
            "times": None if record.get("times") is None else [int(t) for t in record["times"]],
            "flash": [str(colour) for colour in record.get("flash") or []],
            "shown": [str(colour) for colour in record.get("shown") or record.get("flash") or []],
            "frames": frames,
        }
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise CaptureSetInvalid(f"{path / 'capture.json'}: {error}") from None


def judge(capture: dict):
    """The production liveness check on one capture."""
    from checks.liveness import Capture, check_liveness

    record = None
    if capture["times"] is not None:
        record = Capture(
            capture["camera"],
            tuple(capture["times"]),
            tuple(capture["durations"]),
            flash=tuple(capture["flash"]),
            shown=tuple(capture["shown"]),
        )
    return check_liveness(capture["frames"], capture["challenge"], record)


def evaluate(directory: Path) -> dict[str, Tally]:
    from checks.results import Retake

    tallies: dict[str, Tally] = defaultdict(Tally)
    for path in capture_dirs(directory):
        capture = capture_read(path)
        result = judge(capture)
        tally = tallies[capture["type"]]
        tally.total += 1
        if isinstance(result, Retake):
            tally.retakes += 1
            tally.wrong += capture["type"] == GENUINE
            continue
        for signal in result.signals:
            tally.signals[signal] += 1
        if capture["type"] == GENUINE:
            tally.wrong += not result.is_live
        else:
            tally.wrong += result.is_live
    return dict(tallies)


def report_lines(tallies: dict[str, Tally]) -> list[str]:
    lines = [f"{'type':<22} {'n':>5} {'rate':>8}  {'95% exact (Clopper-Pearson)':<28} retakes  signals"]
    for name in sorted(tallies, key=lambda n: (n != GENUINE, n)):
        tally = tallies[name]
        low, high = clopper_pearson_interval(tally.wrong, tally.total)
        metric = "BPCER" if name == GENUINE else "APCER"
        signals = ", ".join(f"{s} {c}" for s, c in sorted(tally.signals.items())) or "-"
        lines.append(
            f"{name:<22} {tally.total:>5} {metric} {tally.wrong / tally.total:6.1%}  "
            f"[{low:6.1%}, {high:6.1%}]{'':<12} {tally.retakes:>7}  {signals}"
        )
    return lines
