"""Calibrate the age policy with the third network's age as a reader input, and print the policy it gives.

    DJANGO_SETTINGS_MODULE=ageverify.settings .venv/bin/python -m assurance.research.age_networks.readers \
        /work/shared/data/faces-dev /work/shared/data/faces-aaf /work/shared/data/faces-pairs \
        --variant today --variant estimate --output /work/research-cache/readers

It runs `manage.py calibrate_age_policy` as it is, on the same readers' inputs cache (var/age-inputs.npz, which
keeps `chip_age` for every face), with only the names each reader reads changed, and writes the policy and the
readers under --output (never over the committed ones). Compare its printed table with the command's own.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

VARIANTS = {
    "today": ("the readers as committed, for comparison", (), ()),
    "estimate": ("the estimate also reads chip_age", ("chip_age",), ()),
    "second-opinion": ("the second opinion also reads chip_age", (), ("chip_age",)),
    "both": ("both readers also read chip_age", ("chip_age",), ("chip_age",)),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+")
    parser.add_argument("--variant", choices=sorted(VARIANTS), action="append", required=True)
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if Path(__file__).resolve().parents[3] in [args.output.resolve(), *args.output.resolve().parents]:
        parser.error("write the research policies outside the repository")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ageverify.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from assurance import readers

    estimate_reads, opinion_reads = readers.ESTIMATE_READS, readers.SECOND_OPINION_READS
    args.output.mkdir(parents=True, exist_ok=True)
    for variant in args.variant:
        what, more_estimate, more_opinion = VARIANTS[variant]
        readers.ESTIMATE_READS = estimate_reads + more_estimate
        readers.SECOND_OPINION_READS = opinion_reads + more_opinion
        print(f"== {variant}: {what}; estimate reads {readers.ESTIMATE_READS}, "
              f"second opinion reads {readers.SECOND_OPINION_READS}", flush=True)  # fmt: skip
        started = time.monotonic()
        call_command(
            "calibrate_age_policy",
            *args.directories,
            output=str(args.output / f"policy-{variant}.json"),
            heads=str(args.output / f"heads-{variant}.npz"),
            jobs=args.jobs,
        )
        print(f"({time.monotonic() - started:.0f} s)", flush=True)
    readers.ESTIMATE_READS, readers.SECOND_OPINION_READS = estimate_reads, opinion_reads


if __name__ == "__main__":
    main()
