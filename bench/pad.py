"""Presentation attack detection: APCER per attack type and BPCER, with exact 95 % bounds.

Run by hand from the repository root:
    .venv/bin/python bench/pad.py DIR            # a capture set in the format of docs/pad.md
    .venv/bin/python bench/pad.py --synthetic 20 # 20 synthetic captures per type (tests.support.pad)
    .venv/bin/python bench/pad.py --flash 100    # the colour flash's threshold on 100 synthetic genuine captures
The synthetic set is regression material made from the test portraits: it shows the checks refuse what
they were built to refuse, not how they fare against real attacks or real users (docs/pad.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

# This file is bench/pad.py: its own folder must not shadow the packages of the repository.
ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", help="a capture set (docs/pad.md)")
    parser.add_argument("--synthetic", type=int, metavar="N", help="evaluate N synthetic captures per type instead")
    parser.add_argument(
        "--flash", type=int, metavar="N", help="calibrate the colour flash on N synthetic genuine captures instead"
    )
    options = parser.parse_args()
    if sum(map(bool, (options.directory, options.synthetic, options.flash))) != 1:
        parser.error("give a DIR, --synthetic N or --flash N")
    # The same code as `manage.py evaluate_pad DIR`, without Django's settings: the checks need none.
    from assurance.pad_evaluation import evaluate, report_lines

    if options.directory:
        print("\n".join(report_lines(evaluate(Path(options.directory)))))
        return
    from tests.support.pad import synthetic_set

    if options.flash:
        from assurance.pad_calibration import flash_calibration
        from assurance.pad_calibration import report_lines as calibration_lines

        with tempfile.TemporaryDirectory() as folder:
            synthetic_set(Path(folder), per_type=options.flash, kinds=("genuine",))
            print(f"synthetic genuine captures: {options.flash} (reflection model: tests.support.pad.REFLECTION)")
            print("\n".join(calibration_lines(flash_calibration(Path(folder), target=0.05))))
        return
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        synthetic_set(Path(folder), per_type=options.synthetic)
        print(f"synthetic set: {options.synthetic} captures per type, made in {time.perf_counter() - started:.0f} s")
        started = time.perf_counter()
        print("\n".join(report_lines(evaluate(Path(folder)))))
        print(f"evaluated in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
