"""The holder match measured on photos of people across years: false match and false non-match rates.

Every photo goes through the production matcher once (decoding, HOG detection, 5-point alignment,
dlib's descriptor: checks.face_match.face_descriptor), then every pair of photos is scored. Genuine
pairs are two photos of one person, impostor pairs two people. A photo without a usable face scores 0
against everything: a non-match, as a user whose face cannot be found is not matched.

The threshold is checked with margins: the people are split in two halves (alternately, in the
order of their labels), a threshold is chosen on the first half's pairs alone (the lowest score whose
false match rate has its 95 % upper bound within TARGET_FALSE_MATCH_RATE) and the rates at it are
reported on the second half, which played no part in choosing it.
"""

from __future__ import annotations

import csv
import itertools
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .labels import IMAGE_SUFFIXES, LABELS_FILE, LabelsInvalid
from .statistics import clopper_pearson_upper

TARGET_FALSE_MATCH_RATE = 0.01
NEAR_AGE_GAP = 10  # years: the pairs "within 10 years of each other"
ADULT_AGE = 18  # both photos at this age or over: what a live adult against their document looks like
CSV_COLUMNS = ["file_a", "file_b", "same_person", "age_gap", "score", "match"]
_PAIRS_NAME = re.compile(r"^(?P<person>\d+)A(?P<age>\d{1,3})", re.IGNORECASE)
_CANDIDATE_THRESHOLDS = np.round(np.arange(0.30, 0.80, 0.005), 3)


@dataclass(frozen=True)
class PersonPhoto:
    path: Path
    person: str
    age: int


@dataclass(frozen=True)
class Pair:
    a: PersonPhoto
    b: PersonPhoto
    score: float

    @property
    def same_person(self) -> bool:
        return self.a.person == self.b.person

    @property
    def age_gap(self) -> int:
        return abs(self.a.age - self.b.age)


@dataclass(frozen=True)
class Rates:
    genuine: int
    impostor: int
    false_non_matches: int
    false_matches: int

    @property
    def fnmr(self) -> float:
        return self.false_non_matches / self.genuine if self.genuine else float("nan")

    @property
    def fmr(self) -> float:
        return self.false_matches / self.impostor if self.impostor else float("nan")

    def fmr_upper(self) -> float:
        return clopper_pearson_upper(self.false_matches, self.impostor) if self.impostor else float("nan")

    def fnmr_upper(self) -> float:
        return clopper_pearson_upper(self.false_non_matches, self.genuine) if self.genuine else float("nan")


def person_photos(directory: Path | str) -> list[PersonPhoto]:
    """Photos named `SSSAyy*` (person SSS at age yy), or listed in a labels.csv with file,person,age."""
    directory = Path(directory)
    if not directory.is_dir():
        raise LabelsInvalid(f"{directory} is not a folder")
    labels = directory / LABELS_FILE
    photos = _from_labels_csv(labels, directory) if labels.is_file() else _from_names(directory)
    if len({photo.person for photo in photos}) < 2:
        raise LabelsInvalid(
            f"{directory}: need photos of at least two people, named SSSAyy*.jpg (person SSS at age yy) or "
            f"listed in a {LABELS_FILE} with the columns file,person,age"
        )
    return sorted(photos, key=lambda photo: photo.path.name)


def _from_names(directory: Path) -> list[PersonPhoto]:
    photos = []
    for path in directory.iterdir():
        match = _PAIRS_NAME.match(path.name)
        if path.is_file() and path.name.lower().endswith(IMAGE_SUFFIXES) and match:
            photos.append(PersonPhoto(path=path, person=match["person"], age=int(match["age"])))
    return photos


def _from_labels_csv(labels: Path, directory: Path) -> list[PersonPhoto]:
    with labels.open(newline="", encoding="utf-8-sig") as handle:
        rows = [row for row in csv.reader(handle) if any(cell.strip() for cell in row)]
    if rows and rows[0] and rows[0][0].strip().lower() == "file":
        rows = rows[1:]
    photos = []
    for number, row in enumerate(rows, start=1):
        where = f"{labels}, row {number}"
        cells = [cell.strip() for cell in row]
        if len(cells) != 3:
            raise LabelsInvalid(f"{where}: expected file,person,age, got {len(cells)} columns")
        name, person, age = cells
        if not age.isdigit():
            raise LabelsInvalid(f"{where}: age must be a whole number of years, got {age!r}")
        path = directory / name
        if Path(name).name != name or not path.is_file():
            raise LabelsInvalid(f"{where}: no image {name!r} in {directory}")
        if not person:
            raise LabelsInvalid(f"{where}: the person is empty")
        photos.append(PersonPhoto(path=path, person=person, age=int(age)))
    return photos


@dataclass
class Scored:
    pairs: list[Pair]
    photos: list[PersonPhoto]
    no_face: int
    seconds_per_photo: list[float]


def score_pairs(photos: list[PersonPhoto], *, progress: Callable[[int], None] = lambda done: None) -> Scored:
    """One descriptor per photo through the production matcher, then the score of every pair."""
    from PIL import Image

    from checks.face_match import face_descriptor, face_matcher, score
    from checks.faces import face_engine

    face_engine(), face_matcher()  # loading is not part of the latency
    descriptors, seconds = [], []
    for done, photo in enumerate(photos, start=1):
        started = time.perf_counter()
        with Image.open(photo.path) as picture:
            picture.load()
            descriptors.append(face_descriptor(picture))
        seconds.append(time.perf_counter() - started)
        progress(done)
    pairs = []
    for (i, a), (j, b) in itertools.combinations(enumerate(photos), 2):
        value = 0.0 if descriptors[i] is None or descriptors[j] is None else score(descriptors[i], descriptors[j])
        pairs.append(Pair(a=a, b=b, score=round(value, 4)))
    return Scored(pairs=pairs, photos=photos, no_face=sum(d is None for d in descriptors), seconds_per_photo=seconds)


def rates(pairs: Iterable[Pair], threshold: float) -> Rates:
    genuine = impostor = fnm = fm = 0
    for pair in pairs:
        matched = pair.score >= threshold
        if pair.same_person:
            genuine += 1
            fnm += not matched
        else:
            impostor += 1
            fm += matched
    return Rates(genuine=genuine, impostor=impostor, false_non_matches=fnm, false_matches=fm)


def halves(photos: list[PersonPhoto]) -> tuple[set[str], set[str]]:
    """The people split in two, alternately in label order: choose on the first, report on the second."""
    people = sorted({photo.person for photo in photos})
    return set(people[0::2]), set(people[1::2])


def within(pairs: Iterable[Pair], people: set[str]) -> list[Pair]:
    return [pair for pair in pairs if pair.a.person in people and pair.b.person in people]


def choose_threshold(pairs: list[Pair], *, target: float = TARGET_FALSE_MATCH_RATE) -> float | None:
    """The lowest candidate threshold whose false match rate's 95 % upper bound is within target."""
    for threshold in _CANDIDATE_THRESHOLDS:
        if rates(pairs, float(threshold)).fmr_upper() <= target:
            return float(threshold)
    return None


def near(pairs: Iterable[Pair]) -> list[Pair]:
    return [pair for pair in pairs if pair.age_gap <= NEAR_AGE_GAP]


def adults(pairs: Iterable[Pair]) -> list[Pair]:
    return [pair for pair in pairs if min(pair.a.age, pair.b.age) >= ADULT_AGE]


@dataclass(frozen=True)
class Report:
    threshold: float
    overall: Rates
    near: Rates
    adults_near: Rates
    chosen_on_first_half: float | None
    held_out: Rates | None
    held_out_near: Rates | None
    photos: int
    people: int
    no_face: int
    latency_ms: float  # per comparison: two photos through the matcher, and the score
    latency_p95_ms: float


def summarise(scored: Scored, threshold: float) -> Report:
    first, second = halves(scored.photos)
    chosen = choose_threshold(within(scored.pairs, first))
    held_out = within(scored.pairs, second)
    per_photo = np.asarray(scored.seconds_per_photo) * 1000
    return Report(
        threshold=threshold,
        overall=rates(scored.pairs, threshold),
        near=rates(near(scored.pairs), threshold),
        adults_near=rates(adults(near(scored.pairs)), threshold),
        chosen_on_first_half=chosen,
        held_out=rates(held_out, chosen) if chosen is not None else None,
        held_out_near=rates(near(held_out), chosen) if chosen is not None else None,
        photos=len(scored.photos),
        people=len({photo.person for photo in scored.photos}),
        no_face=scored.no_face,
        latency_ms=float(2 * per_photo.mean()),
        latency_p95_ms=float(2 * np.percentile(per_photo, 95)),
    )


def _rates_line(label: str, measured: Rates) -> str:
    return (
        f"{label}: false match rate {measured.fmr:.2%} ({measured.false_matches}/{measured.impostor} impostor "
        f"pairs, 95% upper bound {measured.fmr_upper():.2%}); false non-match rate {measured.fnmr:.1%} "
        f"({measured.false_non_matches}/{measured.genuine} genuine pairs, 95% upper bound "
        f"{measured.fnmr_upper():.1%})"
    )


def report_lines(report: Report) -> list[str]:
    lines = [
        f"photos: {report.photos} of {report.people} people; {report.no_face} without a usable face (they match "
        "nothing)",
        f"threshold in force: score >= {report.threshold:.3f} (score = 1 - descriptor distance)",
        _rates_line("all pairs", report.overall),
        _rates_line(f"pairs within {NEAR_AGE_GAP} years", report.near),
        _rates_line(f"pairs of adults ({ADULT_AGE} or over) within {NEAR_AGE_GAP} years", report.adults_near),
    ]
    if report.chosen_on_first_half is None:
        lines.append(
            f"held-out check: no threshold keeps the false match rate's upper bound within "
            f"{TARGET_FALSE_MATCH_RATE:.0%} on the first half of the people"
        )
    else:
        lines += [
            f"held-out check: threshold chosen on the first half of the people (false match rate upper bound "
            f"<= {TARGET_FALSE_MATCH_RATE:.0%}): {report.chosen_on_first_half:.3f}; on the other half:",
            "  " + _rates_line("all pairs", report.held_out),
            "  " + _rates_line(f"pairs within {NEAR_AGE_GAP} years", report.held_out_near),
        ]
    lines.append(
        f"latency per comparison (two photos: detection, alignment, descriptor): mean "
        f"{report.latency_ms:.0f} ms, p95 {report.latency_p95_ms:.0f} ms"
    )
    lines.append(
        f"SUMMARY threshold={report.threshold:.3f} fmr={report.overall.fmr:.4f} fnmr={report.overall.fnmr:.4f} "
        f"fmr_10y={report.near.fmr:.4f} fnmr_10y={report.near.fnmr:.4f} genuine={report.overall.genuine} "
        f"impostor={report.overall.impostor} no_face={report.no_face} latency_ms={report.latency_ms:.0f}"
    )
    return lines


def csv_write(pairs: list[Pair], threshold: float, handle) -> None:
    writer = csv.writer(handle)
    writer.writerow(CSV_COLUMNS)
    for pair in pairs:
        writer.writerow(
            [
                pair.a.path.name,
                pair.b.path.name,
                int(pair.same_person),
                pair.age_gap,
                f"{pair.score:.4f}",
                int(pair.score >= threshold),
            ]
        )
