"""`manage.py calibrate_age_policy DIR [DIR ...]`: train the age readers, fit the policy, write both files.

Both are written where the service reads them (AGE_POLICY_FILE, AGE_READERS_FILE; by default the committed
files), so an operator refits on their own labelled faces with one command, `--statement` writing the
statement on that data. `--in-force` trains nothing: it measures the policy and readers in force on the
held-out half (the "before" of a refit).
"""

import json
import sys
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from assurance.calibration import Readings, policy_document, split_half
from assurance.evaluation import fairness_groups, matched_ages, matched_ages_lines
from assurance.label_audit import audited_errors
from assurance.labels import LabelsInvalid, labelled_folder
from assurance.readers import out_of_fold, read_all, read_inputs, train_heads
from sessions_api.age_policy import (
    PolicyInvalid,
    age_policy,
    policy_file,
    policy_forget,
    policy_load,
    readers_file,
)

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
        "set, and write the readers and the versioned policy file where AGE_READERS_FILE and AGE_POLICY_FILE point "
        "(by default checks/models/age_heads.npz and sessions_api/age_policy.json)."
    )

    def add_arguments(self, parser):
        parser.add_argument("directories", nargs="+", help="labelled folders (faces-dev, faces-aaf, faces-pairs)")
        parser.add_argument(
            "--training-only",
            dest="training_only",
            action="append",
            default=[],
            metavar="DIR",
            help="a labelled folder whose faces all teach the readers and count among the calibration half's adults, "
            "and are never held out (adults only: it must hold no one under 25, so it never counts as a minor)",
        )
        parser.add_argument(
            "--output", default=str(policy_file()), help="where to write the policy (default: where AGE_POLICY_FILE is)"
        )
        parser.add_argument(
            "--heads", default=str(readers_file()), help="where to write the readers (default: AGE_READERS_FILE)"
        )
        parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="the readers' inputs, kept between runs")
        parser.add_argument("--jobs", type=int, default=1, help="processes reading the images (default 1)")
        parser.add_argument(
            "--statement",
            help="then write the statement (age_statement) on the folders' held-out half to this file; the policy "
            "and readers must then be the ones the service reads (their settings' paths)",
        )
        parser.add_argument(
            "--in-force",
            dest="in_force",
            action="store_true",
            help="train nothing: measure the policy and readers in force on the held-out half",
        )

    def handle(self, *args, directories, output=None, heads=None, cache, jobs=1, training_only=(), statement=None,
               in_force=False, **options):  # fmt: skip
        from checks.age import age_network

        output = Path(output) if output else policy_file()
        heads = Path(heads) if heads else readers_file()
        if statement and (output.resolve() != policy_file().resolve() or heads.resolve() != readers_file().resolve()):
            raise CommandError(
                "--statement describes the policy the service reads: write it where AGE_POLICY_FILE and "
                "AGE_READERS_FILE point (leave out --output and --heads)"
            )
        faces, left_out = labelled_sets(directories)
        extra, extra_left_out = labelled_sets(training_only)
        minors = [face.name for _, face in extra if face.true_age < 25]
        if minors:
            raise CommandError(f"--training-only folders must hold adults only (25 and over): {minors[0]} is not")
        halves = np.array([split_half(face.split_key) for _, face in faces] + ["calibration"] * len(extra))
        faces = faces + extra
        if in_force:  # only the held-out half is read
            faces, halves = [faces[i] for i in np.nonzero(halves == "held_out")[0]], halves[halves == "held_out"]
        inputs = read_inputs(
            [face for _, face in faces], cache=Path(cache), progress=progress_printer(len(faces)), jobs=max(1, jobs)
        )
        found = np.array([i.found for i in inputs])
        ages = np.array([face.true_age for _, face in faces])
        sets = np.array([name for name, _ in faces])
        held_out_sets = list(dict.fromkeys(sets[halves == "held_out"]))
        if in_force:
            self._in_force(faces, inputs, found, halves, sets, ages)
            return
        calibration = np.nonzero(found & (halves == "calibration"))[0]
        if len(calibration) < 50:
            raise CommandError(f"only {len(calibration)} calibration faces with a face found: too few to train")
        self.stderr.write(f"training on {len(calibration)} faces (out-of-fold, then all)")
        cal_inputs = [inputs[i] for i in calibration]
        estimates, opinions = out_of_fold(cal_inputs, ages[calibration])
        trained = train_heads(cal_inputs, ages[calibration])
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        # Kept beside the inputs: the out-of-fold readings, to study the choice of thresholds without retraining.
        np.savez(
            Path(cache).with_name("age-readings.npz"), ages=ages[calibration], estimates=estimates, opinions=opinions
        )
        held_out, ethnicities = {}, {}
        for name in held_out_sets:
            chosen = np.nonzero(found & (halves == "held_out") & (sets == name))[0]
            if len(chosen):
                e, o = read_all(trained, [inputs[i] for i in chosen])
                held_out[name] = Readings(ages[chosen], e, o)
                ethnicities[name] = [faces[i][1].ethnicity for i in chosen]
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
            "training_only": sorted(dict.fromkeys(name for name, _ in extra)),
            "label_errors_left_out": left_out + extra_left_out,
        }
        digest = trained.save(heads.with_name(heads.name + ".new.npz"))
        data["readers_sha256"] = digest
        document = policy_document(
            calibration=Readings(ages[calibration], estimates, opinions),
            held_out=held_out,
            network=age_network(readers=(heads, digest)),
            data=data,
            held_out_ethnicities=ethnicities,
        )
        self._write(document, output, heads)
        self.stdout.write("\n".join(policy_lines(document, output)))
        if statement:
            from django.core.management import call_command

            policy_forget()  # the service's loader reads the new pair, hash-checked, as a restarted service would
            call_command(
                "age_statement",
                *directories,
                *("--output", statement, "--jobs", str(max(1, jobs)), "--cache", cache),
                stdout=self.stdout,
            )

    def _write(self, document: dict, output: Path, heads: Path) -> None:
        """The policy checked and written whole, then the readers and the policy renamed into place: a reader of
        either never sees half a file."""
        new_heads = heads.with_name(heads.name + ".new.npz")
        temporary = output.with_name(output.name + ".tmp")
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
            policy_load(temporary)
            new_heads.replace(heads)
            temporary.replace(output)
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error.strerror}")

    def _in_force(self, faces, inputs, found, halves, sets, ages) -> None:
        """The policy and readers in force, on the held-out half: the same lines a calibration prints."""
        from assurance.calibration import _passes, shares_at
        from checks.age_heads import age_heads

        try:
            policy = age_policy()
        except PolicyInvalid as invalid:
            raise CommandError(str(invalid))
        chosen = np.nonzero(found & (halves == "held_out"))[0]
        estimates, opinions = read_all(age_heads(), [inputs[i] for i in chosen])
        readings = Readings(ages[chosen], estimates, opinions)
        groups = fairness_groups([faces[i][0] for i in chosen], [faces[i][1].ethnicity for i in chosen])
        limits = {}
        for limit, rule in policy.limits.items():
            t1, t2 = rule.threshold, rule.second_opinion_threshold
            shares = shares_at(readings, limit, t1, t2)
            to_document = ~_passes(readings, t1, t2)
            by_set = {
                name: shares_at(readings.select(sets[chosen] == name), limit, t1, t2)
                for name in dict.fromkeys(sets[chosen])
            }
            limits[str(limit)] = {
                "threshold": t1,
                "second_opinion_threshold": t2,
                "held_out_half": {
                    **shares,
                    "by_set": by_set,
                    "matched_ages": matched_ages(readings.true_ages, to_document, groups, limit),
                },
            }
        document = {"version": policy.version, "network": {"name": policy.network}, "data": policy.document["data"],
                    "limits": limits}  # fmt: skip
        self.stdout.write("\n".join(policy_lines(document, policy.source, verb="in force, read from")))


def policy_lines(document: dict, output: Path, verb: str = "written to") -> list[str]:
    lines = [
        f"policy {document['version']} {verb} {output}",
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
    lines.append("fairness at matched ages (held-out half):")
    for limit, entry in document["limits"].items():
        if int(limit) in FAIRNESS_LIMITS:
            lines += matched_ages_lines(entry["held_out_half"]["matched_ages"], int(limit))
    return lines


FAIRNESS_LIMITS = (13, 16, 18, 21)


def _fmt(share: dict) -> str:
    if not share["of"]:
        return "n/a"
    return f"{share['count']}/{share['of']} ({100 * share['share']:.1f} %, <= {100 * share['upper_95']:.1f} %)"
