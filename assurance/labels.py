"""Labelled face folders: a `labels.csv` beside the images, or labels in the file names.

File names: UTKFace's `AGE_GENDER_RACE_*.jpg`, or FG-NET's `SSSAyy[x].JPG` (person SSS at age yy; the
person is kept, so that a split by person never puts one person's photos on both sides).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
LABELS_FILE = "labels.csv"
# UTKFace codes, as published with the data set.
GENDERS = {"0": "male", "1": "female"}
ETHNICITIES = {"0": "White", "1": "Black", "2": "Asian", "3": "Indian", "4": "Others"}
MAX_AGE = 130

_UTKFACE_NAME = re.compile(r"^(?P<age>\d{1,3})_(?P<gender>[01])?(?:_(?P<race>[0-4]))?_")
_FGNET_NAME = re.compile(r"^(?P<person>\d{3})A(?P<age>\d{2})[a-z]?\.jpe?g$", re.IGNORECASE)


class LabelsInvalid(Exception):
    """The folder cannot be evaluated; the message says which file or line and why."""


@dataclass(frozen=True)
class LabelledFace:
    path: Path
    true_age: int
    gender: str | None  # "male" | "female" | None when not labelled
    ethnicity: str | None  # a UTKFace group name, the label's own text, or None
    person: str | None = None  # who it shows, when the labels say (FG-NET): photos of one person split together

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def split_key(self) -> str:
        """What the calibration/held-out split hashes: the person when known, else the file name."""
        return f"person:{self.person}" if self.person else self.name


@dataclass(frozen=True)
class LabelledFolder:
    faces: list[LabelledFace]
    unlabelled: int  # images in the folder that carry no label (left out, and reported)
    source: str  # "utkface-names" | "fgnet-names" | "labels.csv"


def labelled_folder(directory: Path | str) -> LabelledFolder:
    """Every labelled image of `directory`, sorted by file name so runs and splits are reproducible."""
    directory = Path(directory)
    if not directory.is_dir():
        raise LabelsInvalid(f"{directory} is not a folder")
    images = sorted(p for p in directory.iterdir() if p.is_file() and p.name.lower().endswith(IMAGE_SUFFIXES))
    labels = directory / LABELS_FILE
    if labels.is_file():
        faces = _from_labels_csv(labels, directory)
        source = "labels.csv"
    else:
        faces = [face for face in map(_from_utkface_name, images) if face is not None]
        source = "utkface-names"
        if not faces:
            faces = [face for face in map(_from_fgnet_name, images) if face is not None]
            source = "fgnet-names"
    if not faces:
        raise LabelsInvalid(
            f"no labelled image in {directory}: name them AGE_GENDER_RACE_*.jpg (UTKFace) or SSSAyy.jpg (FG-NET), "
            f"or add a {LABELS_FILE} with the columns file,age[,gender,ethnicity]"
        )
    labelled = {face.path.name for face in faces}
    return LabelledFolder(faces=faces, unlabelled=sum(p.name not in labelled for p in images), source=source)


def _from_utkface_name(path: Path) -> LabelledFace | None:
    match = _UTKFACE_NAME.match(path.name)
    if match is None or int(match["age"]) > MAX_AGE:
        return None
    return LabelledFace(
        path=path,
        true_age=int(match["age"]),
        gender=GENDERS.get(match["gender"] or ""),
        ethnicity=ETHNICITIES.get(match["race"] or ""),
    )


def _from_fgnet_name(path: Path) -> LabelledFace | None:
    match = _FGNET_NAME.match(path.name)
    if match is None:
        return None
    return LabelledFace(path=path, true_age=int(match["age"]), gender=None, ethnicity=None, person=match["person"])


def _from_labels_csv(labels: Path, directory: Path) -> list[LabelledFace]:
    with labels.open(newline="", encoding="utf-8-sig") as handle:
        rows = [row for row in csv.reader(handle) if any(cell.strip() for cell in row)]
    if rows and rows[0] and rows[0][0].strip().lower() == "file":
        rows = rows[1:]  # a header row
    faces, seen = [], set()
    for number, row in enumerate(rows, start=1):
        where = f"{labels}, row {number}"
        cells = [cell.strip() for cell in row]
        if len(cells) < 2 or len(cells) > 4:
            raise LabelsInvalid(f"{where}: expected file,age[,gender,ethnicity], got {len(cells)} columns")
        name, age = cells[0], cells[1]
        if not age.isdigit() or int(age) > MAX_AGE:
            raise LabelsInvalid(f"{where}: age must be a whole number of years from 0 to {MAX_AGE}, got {age!r}")
        path = directory / name
        if Path(name).name != name or not path.is_file():
            raise LabelsInvalid(f"{where}: no image {name!r} in {directory}")
        if name in seen:
            raise LabelsInvalid(f"{where}: {name!r} is labelled twice")
        seen.add(name)
        gender = cells[2] if len(cells) > 2 else ""
        ethnicity = cells[3] if len(cells) > 3 else ""
        gender = GENDERS.get(gender, gender.lower()) or None
        if gender not in (None, "male", "female"):
            raise LabelsInvalid(f"{where}: gender must be 0/male or 1/female, got {cells[2]!r}")
        faces.append(
            LabelledFace(
                path=path, true_age=int(age), gender=gender, ethnicity=ETHNICITIES.get(ethnicity, ethnicity) or None
            )
        )
    return sorted(faces, key=lambda face: face.path.name)
