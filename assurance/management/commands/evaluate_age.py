"""`manage.py evaluate_age DIR [--limits 13,16,18,21] [--csv FILE]`: the face path measured on labelled faces."""

import sys

from django.core.management.base import BaseCommand, CommandError

from assurance.evaluation import DEFAULT_LIMITS, csv_write, evaluate, report_lines, summarise
from assurance.labels import LabelsInvalid, labelled_folder


def age_limits(text: str) -> list[int]:
    """`13,16,18` -> [13, 16, 18]; each an age limit the API accepts (10..21)."""
    try:
        limits = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise CommandError(f"--limits must be whole numbers separated by commas, got {text!r}")
    if not limits or any(not 10 <= limit <= 21 for limit in limits):
        raise CommandError(f"--limits must be age limits from 10 to 21, got {text!r}")
    return sorted(set(limits))


class Command(BaseCommand):
    help = (
        "Run labelled face images through the production selfie path (minus liveness) with the policy in "
        "force for default tenant settings; print accuracy by age band, approvals by limit and group, latency."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="images named AGE_GENDER_RACE_*.jpg, or with a labels.csv beside them")
        parser.add_argument("--limits", default=",".join(map(str, DEFAULT_LIMITS)))
        parser.add_argument("--csv", dest="csv_file", help="write one row per image to this file")
        parser.add_argument("--jobs", type=int, default=1, help="processes reading the images (default 1)")

    def handle(self, *args, directory, limits, csv_file, jobs=1, **options):
        limits = age_limits(limits)
        try:
            folder = labelled_folder(directory)
        except LabelsInvalid as invalid:
            raise CommandError(str(invalid))
        total = len(folder.faces)

        def progress(done: int) -> None:
            if sys.stderr.isatty() and (done % 100 == 0 or done == total):
                sys.stderr.write(f"\r{done}/{total} images")
                sys.stderr.flush()

        outcomes = evaluate(folder.faces, limits, progress=progress, jobs=max(1, jobs))
        if csv_file:
            try:
                with open(csv_file, "w", newline="", encoding="utf-8") as handle:
                    csv_write(outcomes, limits, handle)
            except OSError as error:
                raise CommandError(f"cannot write {csv_file}: {error.strerror}")
        report = summarise(outcomes, limits, unlabelled=folder.unlabelled)
        self.stdout.write("\n".join(report_lines(report)))
