"""`manage.py audit_age_labels DIR [DIR ...] [--top 60]`: the labelled faces farthest from their label."""

import numpy as np
from django.core.management.base import BaseCommand

from assurance.label_audit import LABEL_ERRORS_FILE, audited_errors
from assurance.readers import out_of_fold, read_inputs

from .calibrate_age_policy import DEFAULT_CACHE, labelled_sets, progress_printer


class Command(BaseCommand):
    requires_system_checks = []
    help = (
        "Read every labelled face with readers that never saw it (out-of-fold) and list those farthest from "
        f"their label, for a person to confirm plain errors into {LABEL_ERRORS_FILE.name}."
    )

    def add_arguments(self, parser):
        parser.add_argument("directories", nargs="+")
        parser.add_argument("--top", type=int, default=60)
        parser.add_argument("--cache", default=str(DEFAULT_CACHE))

    def handle(self, *args, directories, top, cache, **options):
        from pathlib import Path

        faces, left_out = labelled_sets(directories)
        inputs = read_inputs([face for _, face in faces], cache=Path(cache), progress=progress_printer(len(faces)))
        chosen = [i for i, item in enumerate(inputs) if item.found]
        ages = np.array([faces[i][1].true_age for i in chosen])
        estimates, opinions = out_of_fold([inputs[i] for i in chosen], ages)
        # Both readers far from the label, on the same side: a log-age distance, so a baby read as 8 counts
        # as much as a 20-year-old read as 60.
        distance = np.minimum(np.abs(np.log1p(estimates) - np.log1p(ages)), np.abs(np.log1p(opinions) - np.log1p(ages)))
        same_side = np.sign(estimates - ages) == np.sign(opinions - ages)
        order = np.argsort(-(distance * same_side))[:top]
        confirmed = len(audited_errors())
        self.stdout.write(f"{len(chosen)} faces read; {confirmed} confirmed label errors already left out ({left_out})")
        self.stdout.write("set           file                                        label  estimate  second opinion")
        for k in order:
            name, face = faces[chosen[k]]
            self.stdout.write(f"{name:<13} {face.name:<43} {ages[k]:>5}  {estimates[k]:8.1f}  {opinions[k]:8.1f}")
