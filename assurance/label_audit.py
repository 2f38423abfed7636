"""The label audit: calibration faces whose label is a plain error, confirmed by a person and left out.

`manage.py audit_age_labels DIR [DIR ...]` lists the faces farthest from their label, by readers that
never saw them (out-of-fold over every face). A person looks at each and, only where the label is plainly
wrong (an adult labelled 1, a child labelled 40, no face of the labelled age at all), adds a row to
`label_errors.csv` beside this module: set, file, label, why. Calibration leaves those faces out and the
statement says how many and of which kinds. Faces that merely look older or younger than their age stay:
they are exactly what the policy must cope with.
"""

from __future__ import annotations

import csv
from pathlib import Path

LABEL_ERRORS_FILE = Path(__file__).with_name("label_errors.csv")
KINDS = ("adult labelled as a child", "child labelled as an adult", "no face of that age", "duplicate")


def audited_errors(path: Path = LABEL_ERRORS_FILE) -> dict[tuple[str, str], dict]:
    """(set, file) -> the row (set, file, label, why, note), for every confirmed label error."""
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    errors = {}
    for number, row in enumerate(rows, start=2):
        if row.get("why") not in KINDS:
            raise ValueError(f"{path}, line {number}: why must be one of {KINDS}, got {row.get('why')!r}")
        errors[(row["set"], row["file"])] = row
    return errors


def kinds_count(errors: dict[tuple[str, str], dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in errors.values():
        counts[row["why"]] = counts.get(row["why"], 0) + 1
    return counts
