"""`manage.py age_statement DIR [--output docs/age-assurance.md]`: the published statement from measured numbers."""

import datetime
import io
import sys
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from assurance.calibration import split_half
from assurance.evaluation import (
    DEFAULT_LIMITS,
    REQUIRES_DOC,
    evaluate,
    evaluate_cached,
    fairness_groups,
    matched_ages,
    summarise,
)
from assurance.label_audit import audited_errors, kinds_count
from assurance.labels import LabelsInvalid, labelled_folder
from assurance.statement import face_match_section, readme_with_face_path, statement_markdown
from checks.age import age_network_card
from checks.face_match import model_card
from sessions_api.age_policy import age_policy

DEFAULT_OUTPUT = Path(settings.BASE_DIR) / "docs" / "age-assurance.md"


class Command(BaseCommand):
    help = (
        "Evaluate the face path on the held-out half of each calibration set under the policy in force, "
        "and write docs/age-assurance.md from those numbers and the policy file's."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "directories",
            nargs="+",
            help="the calibration sets the policy was fitted on (their held-out halves are used)",
        )
        parser.add_argument("--output", default=str(DEFAULT_OUTPUT))
        parser.add_argument("--jobs", type=int, default=1, help="processes reading the images (default 1)")
        parser.add_argument("--limits", default=",".join(map(str, DEFAULT_LIMITS)))
        parser.add_argument(
            "--cache",
            help="read the networks' outputs from calibrate_age_policy's cache (var/age-inputs.npz) where it has "
            "them, instead of running the networks on every image (then nothing is timed)",
        )
        parser.add_argument(
            "--face-pairs",
            dest="face_pairs",
            help="photos of people across years: adds the holder match's section, printed from "
            "evaluate_face_match's output on them",
        )

    def handle(self, *args, directories, output, limits, face_pairs=None, jobs=1, cache=None, **options):
        from .evaluate_age import age_limits

        limits = age_limits(limits)
        policy = age_policy()
        reports, everyone, names = {}, [], []
        for directory in directories:
            try:
                folder = labelled_folder(directory)
            except LabelsInvalid as invalid:
                raise CommandError(str(invalid))
            held_out = [face for face in folder.faces if split_half(face.split_key) == "held_out"]
            if not held_out:
                raise CommandError(f"no held-out image in {directory}")
            if cache:
                outcomes = evaluate_cached(held_out, limits, cache=Path(cache), jobs=max(1, jobs))
            else:
                outcomes = evaluate(held_out, limits, jobs=max(1, jobs))
            everyone += outcomes
            names += [Path(directory).resolve().name] * len(outcomes)
            reports[Path(directory).resolve().name] = summarise(outcomes, limits)
        reports["all"] = summarise(everyone, limits)
        found = [index for index, outcome in enumerate(everyone) if outcome.face_found]
        groups = fairness_groups([names[i] for i in found], [everyone[i].face.ethnicity for i in found])
        fairness = {
            limit: matched_ages(
                np.array([everyone[i].face.true_age for i in found]),
                np.array([everyone[i].decisions[limit] == REQUIRES_DOC for i in found]),
                groups,
                limit,
            )
            for limit in limits
        }
        command = "python manage.py age_statement " + " ".join(_shown_path(Path(d)) for d in directories)
        if sorted(limits) != sorted(DEFAULT_LIMITS):
            command += f" --limits {','.join(map(str, limits))}"
        if cache:
            command += f" --cache {_shown_path(Path(cache))}"
        face_match = None
        if face_pairs:
            face_match = _face_match_section(Path(face_pairs))
            command += f" --face-pairs {_shown_path(Path(face_pairs))}"
        text = statement_markdown(
            policy=policy.document,
            network=age_network_card(),
            reports=reports,
            command=command,
            generated=datetime.date.today().isoformat(),
            label_errors=kinds_count(audited_errors()),
            face_match=face_match,
            fairness=fairness,
        )
        output = Path(output)
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        if output.resolve() == DEFAULT_OUTPUT.resolve():  # the published statement: the README's table too
            readme = Path(settings.BASE_DIR) / "README.md"
            readme.write_text(readme_with_face_path(readme.read_text(encoding="utf-8"), policy.document))
        self.stdout.write(f"wrote {output} (policy {policy.version}, {reports['all'].images} held-out images)")
        if policy.network != age_network_card()["name"]:
            sys.stderr.write("warning: the policy was calibrated for other readers; recalibrate first\n")


def _face_match_section(directory: Path) -> list[str]:
    """evaluate_face_match run on the folder, its printed lines put in the statement as they are."""
    out = io.StringIO()
    try:
        call_command("evaluate_face_match", str(directory), stdout=out)
    except CommandError as error:
        raise CommandError(f"--face-pairs: {error}")
    return face_match_section(
        card=model_card(),
        lines=out.getvalue().splitlines(),
        command=f"python manage.py evaluate_face_match {_shown_path(directory)}",
    )


def _shown_path(directory: Path) -> str:
    """The data folder as a reader of the statement finds it: ../shared/data/... beside the clone, var/... in it."""
    if directory.resolve().is_relative_to(Path(settings.BASE_DIR)):
        return directory.resolve().relative_to(Path(settings.BASE_DIR)).as_posix()
    parts = directory.resolve().parts
    for index in range(len(parts) - 1):
        if parts[index : index + 2] == ("shared", "data"):
            return "../" + "/".join(parts[index:])
    return directory.as_posix()
