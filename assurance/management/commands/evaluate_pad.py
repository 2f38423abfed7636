"""`manage.py evaluate_pad DIR`: APCER per attack type and BPCER, with exact 95 % bounds, on labelled captures."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assurance.pad_evaluation import CaptureSetInvalid, evaluate, report_lines


class Command(BaseCommand):
    help = (
        "Run every capture under DIR (capture.json + frames, the format of docs/pad.md) through the production "
        "liveness check; print per attack type the share accepted (APCER) and for genuine captures the share "
        "refused (BPCER), each with its exact two-sided 95 % Clopper-Pearson interval."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="a capture set: sub-directories each with capture.json and frames")

    def handle(self, *args, directory, **options):
        try:
            tallies = evaluate(Path(directory))
        except CaptureSetInvalid as error:
            raise CommandError(str(error)) from None
        for line in report_lines(tallies):
            self.stdout.write(line)
