"""`manage.py calibrate_age_policy DIR [--output FILE]`: fit the face-age policy on labelled faces, write its file."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from checks.age import age_network
from sessions_api.age_assurance.calibration import Estimate, policy_document
from sessions_api.age_assurance.evaluation import evaluate
from sessions_api.age_assurance.labels import LabelsInvalid, labelled_folder
from sessions_api.age_assurance.policy import DEFAULT_POLICY_FILE, policy_load


class Command(BaseCommand):
    # Not the start-up checks: this command is what fixes a policy calibrated for another network.
    requires_system_checks = []
    help = (
        "Estimate the age of every labelled face, fit the thresholds and the ageConfidence model on one half, "
        "report them on the other half, and write the versioned policy file the service reads at start-up."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory", help="images named AGE_GENDER_RACE_*.jpg, or with a labels.csv beside them")
        parser.add_argument(
            "--output",
            default=str(DEFAULT_POLICY_FILE),
            help=f"where to write the policy (default: {DEFAULT_POLICY_FILE})",
        )

    def handle(self, *args, directory, output, **options):
        try:
            folder = labelled_folder(directory)
        except LabelsInvalid as invalid:
            raise CommandError(str(invalid))
        outcomes = evaluate(folder.faces, [])
        estimates = [Estimate(o.face, o.estimated_age) for o in outcomes]
        try:
            document = policy_document(
                estimates, network=age_network(), source=Path(directory).resolve().name, labels=folder.source
            )
        except ValueError as error:
            raise CommandError(str(error))
        output = Path(output)
        temporary = output.with_name(output.name + ".tmp")
        try:  # written whole, then renamed: a reader never sees half a policy
            temporary.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
            policy_load(temporary)
            temporary.replace(output)
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error.strerror}")
        self.stdout.write("\n".join(policy_lines(document, output)))


def policy_lines(document: dict, output: Path) -> list[str]:
    data = document["data"]
    lines = [
        f"policy {document['version']} written to {output}",
        f"network: {document['network']['name']}",
        f"data: {data['source']} ({data['labels']}), {data['images']} images, {data['faces_found']} faces found; "
        f"split: {data['split']}",
        "limit  threshold (off: model bound / counted shares would need)  "
        "calibration half: 5y-below approved | younger approved   "
        "held-out half: 5y-below approved | younger approved | adults (limit+7) to document",
    ]
    for limit, entry in document["limits"].items():
        cal, out = entry["calibration_half"], entry["held_out_half"]
        threshold = "off" if entry["threshold"] is None else f"{entry['threshold']:.1f}"
        needs = entry.get("needs") or {}
        if entry["threshold"] is None and needs.get("model_bound") is not None:
            # What it would take: the error model's bound alone, and the counted shares alone.
            counted = needs.get("counted_share")
            threshold += f" (needs {needs['model_bound']:.1f} / {'-' if counted is None else f'{counted:.1f}'})"
        lines.append(
            f"{limit:>5}  {threshold:>22}  {_fmt(cal['near_approved'])} | {_fmt(cal['younger_approved'])}   "
            f"{_fmt(out['near_approved'])} | {_fmt(out['younger_approved'])} | {_fmt(out['adults_to_document'])}"
        )
    return lines


def _fmt(share: dict) -> str:
    if not share["of"]:
        return "n/a"
    return f"{share['count']}/{share['of']} ({100 * share['share']:.1f} %, <= {100 * share['upper_95']:.1f} %)"
