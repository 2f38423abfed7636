"""`manage.py evaluate_face_match DIR [--csv FILE]`: the holder match measured on every pair of photos in DIR."""

import sys

from django.core.management.base import BaseCommand, CommandError

from assurance.face_match_evaluation import (
    csv_write,
    person_photos,
    report_lines,
    score_pairs,
    summarise,
)
from assurance.labels import LabelsInvalid


class Command(BaseCommand):
    help = (
        "Run every pair of photos in DIR through the production face matcher (detection, 5-point alignment, "
        "descriptor, the threshold in force); print false match and false non-match rates, overall and "
        "within 10 years and for adults within 10 years, with exact bounds, for dlib alone and fused, held out "
        "on half of the people, and the latency per comparison."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "directory",
            help="photos named SSSAyy*.jpg (person SSS at age yy), or with a labels.csv (file,person,age) beside them",
        )
        parser.add_argument("--csv", dest="csv_file", help="write one row per pair to this file")

    def handle(self, *args, directory, csv_file, **options):
        from checks.face_match import MATCH_THRESHOLD

        try:
            photos = person_photos(directory)
        except LabelsInvalid as invalid:
            raise CommandError(str(invalid))
        total = len(photos)

        def progress(done: int) -> None:
            if sys.stderr.isatty() and (done % 50 == 0 or done == total):
                sys.stderr.write(f"\r{done}/{total} photos")
                sys.stderr.flush()

        scored = score_pairs(photos, progress=progress)
        if csv_file:
            try:
                with open(csv_file, "w", newline="", encoding="utf-8") as handle:
                    csv_write(scored.pairs, MATCH_THRESHOLD, handle)
            except OSError as error:
                raise CommandError(f"cannot write {csv_file}: {error.strerror}")
        self.stdout.write("\n".join(report_lines(summarise(scored, MATCH_THRESHOLD))))
