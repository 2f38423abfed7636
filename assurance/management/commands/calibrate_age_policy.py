"""`manage.py calibrate_age_policy DIR [DIR ...]`: train the age readers, fit the policy, write both files."""

import json
import sys
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from assurance.calibration import Readings, policy_document, split_half
from assurance.label_audit import audited_errors
from assurance.labels import LabelsInvalid, labelled_folder
from assurance.readers import out_of_fold, read_all, read_inputs, train_heads
from checks.age_heads import HEADS_PATH
from sessions_api.age_policy import DEFAULT_POLICY_FILE, policy_load

DEFAULT_CACHE = Path(settings.BASE_DIR) / "var" / "age-inputs.npz"


def labelled_sets(directories: list[str]):
    """(set name, face) for every labelled face of the folders, label-audit errors left out; and how many were."""
    errors = audited_errors()
    faces, left_out = [], 0
    for directory in directories:
        try:
            folder = labelled_folder(directory)
        except LabelsInvalid as invalid:
            raise CommandError(str(invalid))
        name = Path(directory).resolve().name
        for face in folder.faces:
            if (name, face.name) in errors:
                left_out += 1
            else:
                faces.append((name, face))
    return faces, left_out


def progress_printer(total: int):
    def progress(done: int) -> None:
        if sys.stderr.isatty() and (done % 100 == 0 or done == total):
            sys.stderr.write(f"\r{done}/{total} images")
            sys.stderr.flush()

    return progress


class Command(BaseCommand):
    # Not the start-up checks: this command is what fixes a policy calibrated for other readers.
    requires_system_checks = []
    help = (
        "Read every labelled face through the production path, train the two age readers on the calibration "
        "half, choose each limit's thresholds on out-of-fold predictions, report them on the held-out half per "
        "set, and write the readers (checks/models/age_heads.npz) and the versioned policy file."
    )

    def add_arguments(self, parser):
        parser.add_argument("directories", nargs="+", help="labelled folders (faces-dev, faces-aaf, faces-pairs)")
        parser.add_argument("--output", default=str(DEFAULT_POLICY_FILE), help="where to write the policy")
        parser.add_argument("--heads", default=str(HEADS_PATH), help="where to write the readers")
        parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="the readers' inputs, kept between runs")
        parser.add_argument("--jobs", type=int, default=1, help="processes reading the images (default 1)")

    def handle(self, *args, directories, output, heads, cache, jobs=1, **options):
        from checks.age import age_network

        faces, left_out = labelled_sets(directories)
        inputs = read_inputs(
            [face for _, face in faces], cache=Path(cache), progress=progress_printer(len(faces)), jobs=max(1, jobs)
        )
        halves = np.array([split_half(face.split_key) for _, face in faces])
        found = np.array([i.found for i in inputs])
        ages = np.array([face.true_age for _, face in faces])
        sets = np.array([name for name, _ in faces])
        calibration = np.nonzero(found & (halves == "calibration"))[0]
        if len(calibration) < 50:
            raise CommandError(f"only {len(calibration)} calibration faces with a face found: too few to train")
        self.stderr.write(f"training on {len(calibration)} faces (out-of-fold, then all)")
        cal_inputs = [inputs[i] for i in calibration]
        estimates, opinions = out_of_fold(cal_inputs, ages[calibration])
        trained = train_heads(cal_inputs, ages[calibration])
        digest = trained.save(Path(heads))
        # Kept beside the inputs: the out-of-fold readings, to study the choice of thresholds without retraining.
        np.savez(
            Path(cache).with_name("age-readings.npz"), ages=ages[calibration], estimates=estimates, opinions=opinions
        )
        held_out = {}
        for name in dict.fromkeys(sets):
            chosen = np.nonzero(found & (halves == "held_out") & (sets == name))[0]
            if len(chosen):
                e, o = read_all(trained, [inputs[i] for i in chosen])
                held_out[name] = Readings(ages[chosen], e, o)
        data = {
            "sets": {
                name: {
                    half: {
                        "images": int(((sets == name) & (halves == half)).sum()),
                        "faces_found": int(((sets == name) & (halves == half) & found).sum()),
                    }
                    for half in ("calibration", "held_out")
                }
                for name in dict.fromkeys(sets)
            },
            "label_errors_left_out": left_out,
            "readers_sha256": digest,
        }
        document = policy_document(
            calibration=Readings(ages[calibration], estimates, opinions),
            held_out=held_out,
            network=age_network(),
            data=data,
        )
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
    lines = [
        f"policy {document['version']} written to {output}",
        f"network: {document['network']['name']}",
        f"label errors left out: {document['data']['label_errors_left_out']}",
        "limit  estimate >= | second opinion >=   held-out (all sets): near approved | children approved | "
        "adults to document   adults to document by set",
    ]
    for limit, entry in document["limits"].items():
        out = entry["held_out_half"]
        if entry["threshold"] is None:
            rule = f"off ({entry['why_off']})"
        else:
            rule = f"{entry['threshold']:5.1f} | {entry['second_opinion_threshold']:5.1f}"
        by_set = "  ".join(f"{name}: {_fmt(s['adults_to_document'])}" for name, s in out["by_set"].items())
        lines.append(
            f"{limit:>5}  {rule}   {_fmt(out['near_approved'])} | {_fmt(out['younger_approved'])} | "
            f"{_fmt(out['adults_to_document'])}   {by_set}"
        )
    return lines


def _fmt(share: dict) -> str:
    if not share["of"]:
        return "n/a"
    return f"{share['count']}/{share['of']} ({100 * share['share']:.1f} %, <= {100 * share['upper_95']:.1f} %)"
