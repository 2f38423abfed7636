"""`manage.py calibrate_pad passive DIR...` / `calibrate_pad flash DIR`: the veto thresholds from genuine material."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from assurance.pad_calibration import (
    flash_calibration,
    passive_calibration,
    photo_paths,
    report_lines,
)
from assurance.pad_evaluation import CaptureSetInvalid


class Command(BaseCommand):
    help = (
        "Print the threshold of the passive veto (passive DIR...: folders of bona fide face photos) or of the "
        "colour flash (flash DIR: a capture set, docs/pad.md) for a target BPCER, chosen on one half of the "
        "genuine items; the BPCER it has on the other half and the BPCER of the threshold in force, with exact "
        "95 % Clopper-Pearson intervals."
    )

    def add_arguments(self, parser):
        parser.add_argument("check", choices=["passive", "flash"])
        parser.add_argument("directories", nargs="+", type=Path)
        parser.add_argument("--target", type=float, default=0.05, help="the BPCER to calibrate for (default 0.05)")
        parser.add_argument("--per-directory", type=int, help="passive: an even spread of this many photos per folder")

    def handle(self, *args, check, directories, target, per_directory, **options):
        if not 0 < target < 1:
            raise CommandError("--target is a share between 0 and 1, e.g. 0.05")
        for directory in directories:
            if not directory.is_dir():
                raise CommandError(f"{directory} is not a directory")
        try:
            if check == "passive":
                calibration = passive_calibration(photo_paths(directories, per_directory=per_directory), target=target)
            else:
                if len(directories) != 1:
                    raise CommandError("flash takes one capture set")
                calibration = flash_calibration(directories[0], target=target)
        except CaptureSetInvalid as error:
            raise CommandError(str(error)) from None
        for line in report_lines(calibration):
            self.stdout.write(line)
