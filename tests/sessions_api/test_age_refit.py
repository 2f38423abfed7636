"""An operator refits the age readers and the policy on their own labelled faces, and the service takes the pair.

`calibrate_age_policy` writes both where AGE_POLICY_FILE and AGE_READERS_FILE point and the statement on that
data; the service then reads its estimates with those readers, and refuses to start with a policy beside
readers it was not calibrated for (other readers, or the same file altered by one byte).
"""

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command

from checks.age_heads import HEADS_PATH, heads_digest, heads_load, heads_use

pytestmark = pytest.mark.research_data("faces-dev", "faces-aaf", "faces-aaf-adults")
ROOT = Path(django_settings.BASE_DIR)


def run(command, *args) -> list[str]:
    out = io.StringIO()
    call_command(command, *map(str, args), stdout=out)
    return out.getvalue().splitlines()


@pytest.fixture
def own_faces(tmp_path, research_data) -> Path:
    """An operator's folder: 140 faces of all ages (links to research faces) and a labels.csv of file,age."""
    folder = tmp_path / "own-faces"
    folder.mkdir()
    rows = []
    dev = sorted((research_data / "faces-dev").glob("*.jpg"))
    for number, image in enumerate(dev[:: len(dev) // 90][:90]):
        (folder / f"dev{number:03d}.jpg").symlink_to(image)
        rows.append(f"dev{number:03d}.jpg,{image.name.split('_')[0]}")
    aaf = list(csv.reader((research_data / "faces-aaf" / "labels.csv").read_text().splitlines()))[1:]
    for number, (name, age) in enumerate(aaf[:: len(aaf) // 50][:50]):
        (folder / f"aaf{number:03d}.jpg").symlink_to(research_data / "faces-aaf" / name)
        rows.append(f"aaf{number:03d}.jpg,{age}")
    (folder / "labels.csv").write_text("file,age\n" + "\n".join(rows) + "\n")
    return folder


def adults_folder(research_data, folder: Path, count: int, *, with_a_minor: bool = False) -> Path:
    """Some All-Age-Faces adults (links) with their labels; optionally one of them labelled 17."""
    folder.mkdir()
    rows = list(csv.reader((research_data / "faces-aaf-adults" / "labels.csv").read_text().splitlines()))[1:]
    chosen = rows[:: len(rows) // count][:count]
    for name, _ in chosen:
        (folder / name).symlink_to(research_data / "faces-aaf-adults" / name)
    if with_a_minor:
        chosen[0] = [chosen[0][0], "17"]
    (folder / "labels.csv").write_text("file,age\n" + "".join(f"{name},{age}\n" for name, age in chosen))
    return folder


@pytest.fixture
def committed_readers_after():
    yield
    # The refit readers were put in use in this process; the committed ones are in use again for the next test.
    from sessions_api.age_policy import policy_forget

    policy_forget()
    heads_use(HEADS_PATH, sha256=heads_digest())


def start_service(policy: Path, readers: Path) -> subprocess.CompletedProcess:
    """What a starting service does first: load the settings and the apps (`manage.py check`)."""
    env = {**os.environ, "DEBUG": "1", "AGE_POLICY_FILE": str(policy), "AGE_READERS_FILE": str(readers)}
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_an_operator_refits_the_readers_and_the_service_loads_them_hash_checked(
    own_faces, research_data, tmp_path, settings, committed_readers_after
):
    policy, readers, statement = tmp_path / "etc" / "policy.json", tmp_path / "etc" / "readers.npz", tmp_path / "s.md"
    settings.AGE_POLICY_FILE, settings.AGE_READERS_FILE = str(policy), str(readers)

    adults = adults_folder(research_data, tmp_path / "adults", 20)

    lines = run(
        "calibrate_age_policy", own_faces, "--training-only", adults, "--cache", tmp_path / "inputs.npz",
        "--statement", statement,
    )  # fmt: skip

    document = json.loads(policy.read_text())
    # The adults only taught the readers: none held out, none in the statement's held-out sets.
    assert document["data"]["training_only"] == ["adults"]
    assert document["data"]["sets"]["adults"]["held_out"]["images"] == 0
    assert document["data"]["sets"]["adults"]["calibration"]["images"] == 20
    digest = hashlib.sha256(readers.read_bytes()).hexdigest()
    assert document["data"]["readers_sha256"] == digest != heads_digest()
    assert f"sha256 {digest[:12]}" in document["network"]["name"]
    assert lines[0] == f"policy {document['version']} written to {policy}"
    assert lines[-1].startswith(f"wrote {statement} (policy {document['version']}, ")
    text = statement.read_text()
    assert f"Policy in force: **{document['version']}**" in text and "| own-faces |" in text
    assert f"the two readers, `age_heads.npz` (sha256 {digest[:12]})" in text

    # The service reads faces with the refit readers: evaluate_age's estimates are theirs, not the committed ones'.
    from assurance.labels import labelled_folder
    from assurance.readers import read_all, read_inputs

    faces = labelled_folder(own_faces).faces[:4]
    rows_file = tmp_path / "rows.csv"
    sample = tmp_path / "sample"
    sample.mkdir()
    for face in faces:
        (sample / face.name).symlink_to(face.path.resolve())
    (sample / "labels.csv").write_text("file,age\n" + "".join(f"{f.name},{f.true_age}\n" for f in faces))
    run("evaluate_age", sample, "--csv", rows_file)
    shown = {row["file"]: row["estimated_age"] for row in csv.DictReader(rows_file.open())}
    inputs = read_inputs(faces, cache=tmp_path / "inputs.npz")
    found = [(face, i) for face, i in zip(faces, inputs) if i.found]
    refit, _ = read_all(heads_load(readers), [i for _, i in found])
    committed, _ = read_all(heads_load(HEADS_PATH), [i for _, i in found])
    assert found
    for (face, _), mine in zip(found, refit):
        assert abs(float(shown[face.name]) - mine) <= 0.05, face.name
    assert max(abs(refit - committed)) > 1.0

    # A service started with the pair starts; with other readers, or these altered by one byte, it does not.
    assert start_service(policy, readers).returncode == 0
    altered = tmp_path / "altered.npz"
    altered.write_bytes(readers.read_bytes()[:-1] + bytes([readers.read_bytes()[-1] ^ 1]))
    for other in (HEADS_PATH, altered):
        started = start_service(policy, other)
        assert started.returncode != 0
        assert "was calibrated for other readers" in started.stderr
        assert f"not {digest}" in started.stderr


def test_a_training_only_folder_with_a_minor_is_refused_before_anything_is_read(research_data, tmp_path, own_faces):
    adults = adults_folder(research_data, tmp_path / "adults", 5, with_a_minor=True)

    with pytest.raises(CommandError, match="must hold adults only .25 and over.: .* is not"):
        run(
            "calibrate_age_policy", own_faces, "--training-only", adults, "--cache", tmp_path / "inputs.npz",
            "--output", tmp_path / "policy.json", "--heads", tmp_path / "heads.npz",
        )  # fmt: skip
    assert not (tmp_path / "inputs.npz").exists() and not (tmp_path / "policy.json").exists()
