"""evaluate_age and calibrate_age_policy, run as an operator runs them, on a sample of the labelled research faces.

The faces (the research data set `faces-dev`, never copied into the repository) sit beside the clone:
CI has them at ../shared/data; without them these tests are skipped (docs/testing.md). A full pass
belongs to the commands, not here.
"""

import csv
import hashlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from checks.results import AgeReading
from sessions_api.age_policy import DEFAULT_POLICY_FILE, face_rule, policy_load

SAMPLE_SIZE = 40
pytestmark = pytest.mark.research_data("faces-dev")


@pytest.fixture(scope="module")
def sample(tmp_path_factory, research_data) -> Path:
    """Every n-th labelled face by name (all ages, groups): links, not copies."""
    images = sorted((research_data / "faces-dev").glob("*.jpg"))
    folder = tmp_path_factory.mktemp("faces-sample")
    for image in images[:: len(images) // SAMPLE_SIZE][:SAMPLE_SIZE]:
        (folder / image.name).symlink_to(image)
    return folder


def run(command, *args) -> list[str]:
    out = io.StringIO()
    call_command(command, *map(str, args), stdout=out)
    return out.getvalue().splitlines()


def test_evaluate_age_reports_bands_limits_groups_and_a_summary_and_writes_one_row_per_image(
    sample, tmp_path, age_policy_file
):
    age_policy_file({18: 30.0, 13: None})
    rows_file = tmp_path / "rows.csv"

    lines = run("evaluate_age", sample, "--limits", "18,13", "--csv", rows_file, "--jobs", "2")

    assert lines[0].startswith(f"images: {SAMPLE_SIZE}   faces found: ")
    for band in ("<13", "13-17", "18-24", "25-40", "41-60", "60+", "all"):
        assert any(line.startswith(band + " ") for line in lines), band
    assert "age limit 13" in lines and "age limit 18" in lines
    assert any(line.startswith("  aged 13-17 approved on the face alone:") for line in lines)
    assert any(line.startswith("  aged 25-40 sent to the document step:") for line in lines)
    assert any(line.startswith("  children aged 6-12 approved:") for line in lines)
    assert any("by gender" in line for line in lines) and any("by ethnicity" in line for line in lines)
    assert any(line.startswith("latency per image:") for line in lines)
    assert lines[-1].startswith(f"SUMMARY images={SAMPLE_SIZE} ") and "L18_near_approved=" in lines[-1]

    with rows_file.open() as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["file", "true_age", "face_found", "estimated_age", "decision_13", "decision_18"]
    assert sorted(row[0] for row in rows[1:]) == sorted(p.name for p in sample.iterdir())
    rule = face_rule(age_limit=18)
    for name, true_age, found, estimated, at_13, at_18 in rows[1:]:
        assert int(true_age) == int(name.split("_")[0])
        if found == "false":
            assert (estimated, at_13, at_18) == ("", "retake", "retake")
            continue
        # The policy in force decides: limit 13 has the face path off, 18 approves from 30 (and the floor).
        passes = rule.passes(AgeReading(estimated_age=float(estimated), faces_used=1))
        assert (at_13, at_18) == ("requires_doc", "approved" if passes else "requires_doc")

    # The adults sent to a document at 18, per five-year band, are the rows' own counts.
    by_age = lines[lines.index("age limit 18") + 4]
    found = [row for row in rows[1:] if row[2] == "true"]
    for low, high in ((25, 29), (30, 34), (35, 40)):
        adults = [row for row in found if low <= int(row[1]) <= high]
        sent = sum(row[5] == "requires_doc" for row in adults)
        shown = f"{100 * sent / len(adults):5.1f} % of {len(adults):<5d}" if adults else f"{'n/a':>16}"
        assert f"{low}-{high} {shown}" in by_age, by_age


def test_evaluate_age_reads_a_labels_csv_with_free_text_groups(sample, tmp_path):
    folder = tmp_path / "labelled"
    folder.mkdir()
    faces = sorted(sample.iterdir())[-3:]
    for index, face in enumerate(faces):
        (folder / f"person-{index}.jpg").symlink_to(face.resolve())
    (folder / "labels.csv").write_text(
        "file,age,gender,ethnicity\nperson-0.jpg,34,female,Sami\nperson-1.jpg,12,1,2\nperson-2.jpg,70\n"
    )
    rows_file = tmp_path / "rows.csv"

    lines = run("evaluate_age", folder, "--limits", "16", "--csv", rows_file)

    assert lines[0].startswith("images: 3 ")
    assert any(line.strip().startswith("Sami ") for line in lines) and any(
        line.strip().startswith("Asian ") for line in lines
    )
    assert [row[:2] for row in csv.reader(rows_file.open())][1:] == [
        ["person-0.jpg", "34"],
        ["person-1.jpg", "12"],
        ["person-2.jpg", "70"],
    ]


@pytest.mark.parametrize(
    "labels, message",
    [
        ("file,age\nghost.jpg,20\n", "row 1: no image 'ghost.jpg'"),
        ("file,age\nface.jpg,twenty\n", "row 1: age must be a whole number"),
        ("face.jpg,20,x\n", "row 1: gender must be 0/male or 1/female"),
    ],
)
def test_a_bad_labels_csv_is_refused_with_the_row_and_the_reason(sample, tmp_path, labels, message):
    (tmp_path / "face.jpg").symlink_to(next(sample.iterdir()).resolve())
    (tmp_path / "labels.csv").write_text(labels)

    with pytest.raises(CommandError, match=message.replace("(", r"\(")):
        run("evaluate_age", tmp_path)


def test_evaluate_age_refuses_a_folder_without_labels_and_bad_limits(tmp_path, sample):
    with pytest.raises(CommandError, match="no labelled image"):
        run("evaluate_age", tmp_path)
    with pytest.raises(CommandError, match="age limits from 10 to 21"):
        run("evaluate_age", sample, "--limits", "9,18")


@pytest.fixture(scope="module")
def mixed_sample(tmp_path_factory, research_data) -> list[Path]:
    """Three small labelled folders, one per research set (links, not copies): 80 + 60 + 20 faces."""
    folders = []
    for name, size in (("faces-dev", 80), ("faces-aaf", 60), ("faces-pairs", 20)):
        source = research_data / name
        images = sorted(p for p in source.iterdir() if p.suffix.lower() == ".jpg")
        folder = tmp_path_factory.mktemp(name) / name
        folder.mkdir()
        chosen = images[:: max(1, len(images) // size)][:size]
        for image in chosen:
            (folder / image.name).symlink_to(image)
        if (source / "labels.csv").is_file():
            wanted = {p.name for p in chosen}
            rows = [
                line for line in (source / "labels.csv").read_text().splitlines()[1:] if line.split(",")[0] in wanted
            ]
            (folder / "labels.csv").write_text("file,age\n" + "\n".join(rows) + "\n")
        folders.append(folder)
    return folders


@pytest.mark.research_data("faces-dev", "faces-aaf", "faces-pairs")
def test_calibrate_age_policy_trains_the_readers_and_writes_a_policy_with_its_evidence(mixed_sample, tmp_path):
    output, heads = tmp_path / "policy.json", tmp_path / "heads.npz"

    lines = run(
        "calibrate_age_policy", *mixed_sample, "--output", output, "--heads", heads, "--cache", tmp_path / "c.npz"
    )

    policy = policy_load(output)
    document = json.loads(output.read_text())
    assert lines[0] == f"policy {policy.version} written to {output}"
    assert set(document["data"]["sets"]) == {"faces-dev", "faces-aaf", "faces-pairs"}
    assert "FG-NET's person" in document["data"]["split"]
    assert document["data"]["readers_sha256"] == hashlib.sha256(heads.read_bytes()).hexdigest()
    assert document["rule"]["near_max_share"] == 0.01 and document["rule"]["younger_max_share"] == 0.001
    # The readers it wrote read a face: both an estimate and a second opinion, in years.
    from checks.age_heads import heads_load

    face = {
        "network_age": np.array([30.0]),
        "network_features": np.zeros((1, 512)),
        "descriptor": np.zeros((1, 128)),
        "description_age": np.array([30.0]),
        "description_features": np.zeros((1, 1024)),
    }
    estimate, opinion = heads_load(heads).read(face)
    assert 0 < estimate[0] < 130 and 0 < opinion[0] < 130
    # A hundred and sixty faces are far too few to vouch for a 1 % bound: every limit is off, and says why.
    assert set(policy.limits) == set(range(10, 22))
    assert all(limit.threshold is None for limit in policy.limits.values())
    assert all("calibration faces aged" in entry["why_off"] for entry in document["limits"].values())
    assert all(
        set(entry["held_out_half"]["by_set"]) <= set(document["data"]["sets"]) for entry in document["limits"].values()
    )
    assert len([line for line in lines if " off (" in line]) == 12


def test_reading_the_faces_in_two_processes_gives_what_one_process_gives_and_caches_it(sample, tmp_path):
    """calibrate_age_policy --jobs 2 reads each new image in one of two processes: the same inputs, and the same
    again from the cache, so a run that reads the images and one that finds them cached train the same readers."""
    from assurance.labels import labelled_folder
    from assurance.readers import read_inputs

    faces = labelled_folder(sample).faces
    faces = [*faces, faces[0]]  # the same image twice is read once
    one = read_inputs(faces)

    two = read_inputs(faces, cache=tmp_path / "inputs.npz", jobs=2)
    cached = read_inputs(faces, cache=tmp_path / "inputs.npz")

    def numbers(inputs) -> np.ndarray:
        if not inputs.found:
            return np.zeros(0)
        return np.hstack([inputs.network_age, inputs.features, inputs.descriptor, inputs.description_age,
                          inputs.description_features, inputs.chip_age])  # fmt: skip

    assert sum(i.found for i in one) > len(one) / 2
    # The third network's age is read and kept too, as a candidate input: an age a person can have.
    assert all(0 < i.chip_age <= 80 for i in one if i.found)
    # Exactly equal: the readers trained on them would differ otherwise (a fresh run and a cached one must agree).
    for other in (two, cached):
        assert [i.found for i in other] == [i.found for i in one]
        assert all(np.array_equal(numbers(a), numbers(b)) for a, b in zip(other, one))


def test_calibrate_age_policy_refuses_too_few_faces_and_leaves_no_file(sample, tmp_path):
    folder = tmp_path / "few"
    folder.mkdir()
    for face in sorted(sample.iterdir())[:4]:
        (folder / face.name).symlink_to(face.resolve())
    output = tmp_path / "policy.json"

    with pytest.raises(CommandError, match="too few to train"):
        run(
            "calibrate_age_policy", folder, "--output", output, "--heads", tmp_path / "h.npz", "--cache", tmp_path / "c"
        )
    assert not output.exists() and not (tmp_path / "h.npz").exists()


def test_the_label_audit_list_is_well_formed_and_left_out_of_calibration():
    from assurance.label_audit import KINDS, audited_errors

    errors = audited_errors()
    assert errors and all(row["why"] in KINDS and row["note"] for row in errors.values())
    assert {name for name, _ in errors} <= {"faces-dev", "faces-aaf", "faces-pairs"}
    assert json.loads(DEFAULT_POLICY_FILE.read_text())["data"]["label_errors_left_out"] == len(errors)


def test_age_statement_writes_the_published_statement_from_the_policy_and_a_held_out_run(sample, tmp_path):
    output = tmp_path / "age-assurance.md"

    lines = run("age_statement", sample, "--output", output)

    text = output.read_text()
    policy = policy_load(DEFAULT_POLICY_FILE)
    assert lines == [f"wrote {output} (policy {policy.version}, {_held_out_count(sample)} held-out images)"]
    for heading in (
        "## The readers",
        "## Calibration data",
        "## The policy per age limit",
        "### By set (held-out half): adults sent to a document",
        "## Accuracy on the held-out half",
        "### Fairness: the estimate's error by group",
        "## What is not measured, and what the service does about it",
        "## Digital ID: an age proof from a wallet credential",
    ):
        assert heading in text
    for unmeasured in (
        "**Real webcam selfies.**",
        "**Presentation attacks.**",
        "**Repeated attempts by the same minor across sessions.**",
    ):
        assert unmeasured in text
    assert f"Policy in force: **{policy.version}**" in text and policy.network in text
    assert "**Label audit.**" in text
    assert all(f"| {limit} | " in text for limit in range(10, 22))
    assert "\nSUMMARY images=" in text and "Do not edit by hand" in text
    assert "Stored: the outcome (the claim, e.g. `age_over_18`, and its boolean), the doc type" in text


def test_age_statement_in_two_processes_measures_what_one_process_measures(sample, tmp_path):
    one, two = tmp_path / "one.md", tmp_path / "two.md"

    run("age_statement", sample, "--output", one)
    run("age_statement", sample, "--output", two, "--jobs", "2")

    def measured(path: Path) -> list[str]:  # every line but the per-image latency, which varies
        return [line for line in path.read_text().splitlines() if "latency" not in line.lower() and " ms" not in line]

    assert measured(one) == measured(two) and "SUMMARY images=" in two.read_text()


def _held_out_count(folder: Path) -> int:
    from assurance.calibration import split_half

    return sum(split_half(path.name) == "held_out" for path in folder.iterdir())


def test_age_statement_prints_the_holder_match_section_from_evaluate_face_match(sample, tmp_path):
    from tests.sessions_api.test_face_match_command import photos_of_two_people

    (tmp_path / "pairs").mkdir()
    pairs = photos_of_two_people(tmp_path / "pairs", names=[("001A30.jpg", "001A35.jpg"), ("002A60.jpg", "002A75.jpg")])
    output = tmp_path / "age-assurance.md"
    run("age_statement", sample, "--output", output, "--face-pairs", pairs)

    text = output.read_text()
    printed = run("evaluate_face_match", pairs)
    assert "## Holder match (document path)" in text
    # Each network the match reads, with its data and licence.
    card = text.split("## Holder match (document path)", 1)[1]
    assert "- **dlib's face descriptor:**" in card and "public domain (CC0 1.0" in card and "FaceScrub" in card
    assert "- **HSE FaceRes:**" in card and "Apache-2.0" in card and "VGGFace2" in card
    # The command's own lines, not numbers typed into the statement; the latency varies between runs.
    assert printed[-1].rsplit(" latency_ms=", 1)[0] in text
    assert all(line in text for line in printed if "latency" not in line)


def _adults_aged(research_data: Path, folder: Path, counts: dict[tuple[int, int], int]) -> Path:
    """A folder of held-out faces-dev adults: so many per age band, by name order (links, not copies)."""
    from assurance.calibration import split_half

    folder.mkdir()
    for (low, high), count in counts.items():
        images = sorted(
            image
            for image in (research_data / "faces-dev").glob("*.jpg")
            if low <= int(image.name.split("_")[0]) <= high and split_half(image.name) == "held_out"
        )
        for image in images[:count]:
            (folder / image.name).symlink_to(image)
    return folder


def test_age_statement_compares_the_sets_adults_at_equal_ages(research_data, tmp_path):
    """Two sets with opposite adult age mixes: each set's share at the pooled mix is what its bands give."""
    younger = _adults_aged(research_data, tmp_path / "younger", {(25, 29): 12, (30, 34): 4, (35, 40): 3})
    older = _adults_aged(research_data, tmp_path / "older", {(25, 29): 3, (30, 34): 4, (35, 40): 12})
    output = tmp_path / "age-assurance.md"

    run("age_statement", younger, older, "--output", output, "--limits", "18")

    text = output.read_text()
    section = text.split("### Fairness at equal ages: adults sent to a document, by set and age")[1]
    table = section.split("Age limit 18:\n\n")[1].split("\n\n")[0].splitlines()
    assert table[0] == "| adults aged | younger | older | all |"
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table[2:])}
    assert list(rows) == ["25-29", "30-34", "35-40", "as measured", "at the pooled age mix"]

    def count(cell: str) -> tuple[int, int]:
        done, of = cell.split(" = ")[0].split("/")
        return int(done), int(of)

    bands = ["25-29", "30-34", "35-40"]
    pooled = [count(rows[band][2])[1] for band in bands]
    assert pooled == [count(rows[band][0])[1] + count(rows[band][1])[1] for band in bands]  # both sets together
    assert count(rows["25-29"][0])[1] > count(rows["25-29"][1])[1] and count(rows["35-40"][1])[1] > 2  # opposite mixes
    for column, name in enumerate(["younger", "older"]):
        per_band = [count(rows[band][column]) for band in bands]
        assert count(rows["as measured"][column]) == tuple(map(sum, zip(*per_band)))
        expected = sum(of_all / sum(pooled) * done / of for (done, of), of_all in zip(per_band, pooled))
        assert rows["at the pooled age mix"][column] == f"{100 * expected:.1f} %", name
    assert "Largest gap between the sets" not in section.split("### Fairness: the estimate's error")[0]  # too few


UTKFACE_RACES = {"0": "White", "1": "Black", "2": "Asian", "3": "Indian", "4": "Others"}  # as published with UTKFace


def test_age_statement_standardises_each_groups_adults_by_year_of_age(research_data, tmp_path):
    """Each group's share at the pooled ages is its per-year shares weighted by the pooled faces of each year,
    recomputed here from evaluate_age's own rows (one decision per face) for the same faces."""
    younger = _adults_aged(research_data, tmp_path / "younger", {(25, 29): 12, (30, 34): 4, (35, 40): 3})
    older = _adults_aged(research_data, tmp_path / "older", {(25, 29): 3, (30, 34): 4, (35, 40): 12})
    output = tmp_path / "age-assurance.md"

    run("age_statement", younger, older, "--output", output, "--limits", "18")

    section = output.read_text().split("### Fairness at matched ages: adults sent to a document, by group and year")[1]
    table = section.split("Age limit 18:\n\n")[1].split("\n\n")[0].splitlines()
    assert table[0] == (
        "| group | adults | as measured | aged 25-30 | aged 31-35 | aged 36-40 | at the pooled ages | coverage |"
    )
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in table[2:])}
    faces = {}  # (folder, file) -> (set, race, true age, sent to a document); the folders may share faces
    for folder in (younger, older):
        run("evaluate_age", folder, "--limits", "18", "--csv", tmp_path / f"{folder.name}.csv")
        for row in csv.DictReader((tmp_path / f"{folder.name}.csv").open()):
            if row["face_found"] == "true":
                race = UTKFACE_RACES[row["file"].split("_")[2]]
                sent = row["decision_18"] == "requires_doc"
                faces[folder.name, row["file"]] = (folder.name, race, int(row["true_age"]), sent)
    pooled = {}
    for _, _, age, _ in faces.values():
        pooled[age] = pooled.get(age, 0) + 1
    groups = {"all": lambda f: True, "younger": lambda f: f[0] == "younger", "older": lambda f: f[0] == "older"}
    for race in {f[1] for f in faces.values()}:
        for name in ("younger", "older"):
            groups[f"{name} {race}"] = lambda f, name=name, race=race: f[0] == name and f[1] == race
    checked = 0
    for name, member in groups.items():
        chosen = [f for f in faces.values() if member(f)]
        if not chosen:
            continue
        years = sorted({f[2] for f in chosen})
        weight = {year: pooled[year] / sum(pooled[y] for y in years) for year in years}
        share = sum(
            weight[year] * sum(f[3] for f in chosen if f[2] == year) / sum(1 for f in chosen if f[2] == year)
            for year in years
        )
        assert rows[name][0] == str(len(chosen)), name
        assert rows[name][-2] == f"{100 * share:.1f} %", name
        assert rows[name][-1] == f"{100 * sum(pooled[y] for y in years) / len(faces):.0f} %", name
        checked += 1
    assert checked >= 5 and len(rows) == checked


def test_calibrate_age_policy_in_force_measures_the_pair_in_force_without_training(sample, tmp_path):
    """--in-force trains nothing and writes nothing: its held-out counts are evaluate_age's on the same faces."""
    from assurance.calibration import split_half

    policy_before = DEFAULT_POLICY_FILE.read_bytes()
    lines = run("calibrate_age_policy", sample, "--in-force", "--cache", tmp_path / "inputs.npz")

    policy = policy_load(DEFAULT_POLICY_FILE)
    assert lines[0] == f"policy {policy.version} in force, read from {DEFAULT_POLICY_FILE}"
    assert DEFAULT_POLICY_FILE.read_bytes() == policy_before and not (tmp_path / "age-readings.npz").exists()
    held_out = tmp_path / "held-out"
    held_out.mkdir()
    for image in sample.iterdir():
        if split_half(image.name) == "held_out":
            (held_out / image.name).symlink_to(image.resolve())
    run("evaluate_age", held_out, "--limits", "13,16,18,21", "--csv", tmp_path / "rows.csv")
    rows = [row for row in csv.DictReader((tmp_path / "rows.csv").open()) if row["face_found"] == "true"]
    printed = {int(line.split()[0]): line for line in lines if line.split() and line.split()[0].isdigit()}
    for limit in (13, 16, 18, 21):
        low, high = max(25, limit + 7), 40
        adults = [row for row in rows if low <= int(row["true_age"]) <= high]
        sent = sum(row[f"decision_{limit}"] == "requires_doc" for row in adults)
        near = [row for row in rows if limit - 5 <= int(row["true_age"]) < limit]
        approved = sum(row[f"decision_{limit}"] == "approved" for row in near)
        # near approved | children approved | adults to document, each "count/of (...)" or "n/a" with no face
        shares = re.findall(r"(\d+/\d+) \(|(n/a)", printed[limit])[:3]
        assert [a or b for a, b in shares][0::2] == [
            f"{approved}/{len(near)}" if near else "n/a",
            f"{sent}/{len(adults)}" if adults else "n/a",
        ], limit
    assert "fairness at matched ages (held-out half):" in lines
