"""Fill the readers' input cache (var/age-inputs.npz, as calibrate_age_policy keeps it) for one half.

    .venv/bin/python -m assurance.research.decision_reader.fill /work/shared/data/faces-{dev,aaf,pairs} --jobs 2 \
        [--half held_out]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from assurance.readers import read_inputs
from assurance.research.faceres_finetune.extract import half_faces

CACHE = Path(__file__).resolve().parents[3] / "var" / "age-inputs.npz"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--half", choices=("calibration", "held_out"), default="calibration")
    args = parser.parse_args(argv)
    faces = [face for _, face in half_faces(args.directories, args.half)]
    started = time.monotonic()

    def progress(done: int) -> None:
        if done % 200 == 0:
            print(f"{done}/{len(faces)}, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

    inputs = read_inputs(faces, cache=CACHE, progress=progress, jobs=args.jobs)
    print(f"{sum(i.found for i in inputs)} of {len(faces)} faces found, cache {CACHE}")


if __name__ == "__main__":
    main()
