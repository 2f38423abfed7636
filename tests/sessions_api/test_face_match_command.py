"""evaluate_face_match, run as an operator runs it, on a small folder of two people's photos (test fixtures)."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from checks.face_match import MATCH_THRESHOLD
from tests.support.faces import PORTRAITS, add_noise, turn_head

COLUMNS = ["file_a", "file_b", "same_person", "age_gap", "score", "match"]


def photos_of_two_people(folder, *, names):
    """Two photos per person (frontal, and turned a little with noise), under the given names."""
    for person, (first, second) in zip(("astronaut", "hopper"), names):
        portrait, geometry = PORTRAITS[person]()
        portrait.save(folder / first)
        add_noise(turn_head(portrait, geometry, 8.0), seed=3).save(folder / second)
    return folder


def run(*args) -> list[str]:
    out = io.StringIO()
    call_command("evaluate_face_match", *map(str, args), stdout=out)
    return out.getvalue().splitlines()


@pytest.fixture(scope="module")
def pairs_folder(tmp_path_factory):
    return photos_of_two_people(
        tmp_path_factory.mktemp("pairs"), names=[("001A30.jpg", "001A35.JPG"), ("002A60.jpg", "002A75.jpg")]
    )


def test_it_scores_every_pair_and_ends_with_a_summary(pairs_folder, tmp_path):
    rows_file = tmp_path / "rows.csv"
    lines = run(pairs_folder, "--csv", rows_file)
    summary = lines[-1]
    assert summary.startswith("SUMMARY ")
    fields = dict(part.split("=") for part in summary.split()[1:])
    assert float(fields["threshold"]) == MATCH_THRESHOLD
    # Two genuine pairs that match, four impostor pairs that do not.
    assert (fields["genuine"], fields["impostor"], fields["fnmr"], fields["fmr"]) == ("2", "4", "0.0000", "0.0000")
    # Every rate for all pairs, within 10 years and for adults within 10 years, with its exact interval.
    for subset in ("all pairs", "pairs within 10 years", "pairs of adults (18 or over) within 10 years"):
        assert any(
            line.strip().startswith(f"{subset}: false match rate") and "exact 95% interval" in line for line in lines
        )
    # Each matcher alone and fused, each chosen on one half of the people and reported on the other (one person a
    # half here: no impostor pair to choose a threshold on or to fit the fusion with, which each says).
    for matcher in ("dlib's closeness alone", "HSE FaceRes's features alone"):
        (line,) = [line for line in lines if line.startswith(matcher)]
        assert "no threshold keeps the false match rate's upper bound within 0.1%" in line
    assert any(line.startswith("fused, refitted on the first half: not fitted") for line in lines)
    assert any("latency per comparison" in line for line in lines)
    with rows_file.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == COLUMNS
    by_pair = {(row[0], row[1]): row for row in rows[1:]}
    assert len(by_pair) == 6
    same = by_pair[("001A30.jpg", "001A35.JPG")]
    assert same[2:4] == ["1", "5"] and same[5] == "1" and float(same[4]) >= MATCH_THRESHOLD
    other = by_pair[("001A30.jpg", "002A60.jpg")]
    assert other[2:4] == ["0", "30"] and other[5] == "0"


def test_a_labels_file_names_the_people_instead(tmp_path):
    folder = photos_of_two_people(tmp_path, names=[("a.png", "b.png"), ("c.png", "d.png")])
    (folder / "labels.csv").write_text("file,person,age\na.png,ann,30\nb.png,ann,31\nc.png,bo,60\nd.png,bo,80\n")
    summary = run(folder)[-1].split()
    assert "genuine=2" in summary and "impostor=4" in summary


def test_a_folder_with_one_person_is_refused_with_a_clear_error(tmp_path):
    PORTRAITS["astronaut"]()[0].save(tmp_path / "001A30.jpg")
    with pytest.raises(CommandError, match="at least two people"):
        run(tmp_path)


def test_a_bad_labels_row_names_its_line(tmp_path):
    (tmp_path / "labels.csv").write_text("file,person,age\nmissing.jpg,ann,30\n")
    with pytest.raises(CommandError, match="row 1: no image 'missing.jpg'"):
        run(tmp_path)
