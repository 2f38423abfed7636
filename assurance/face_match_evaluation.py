"""The holder match measured on photos of people across years: false match and false non-match rates.

Every photo goes through the production matcher once (decoding, HOG detection, 5-point alignment,
dlib's descriptor and FaceRes's age: checks.face_match.face_descriptor), then every pair of photos is
scored. Genuine pairs are two photos of one person, impostor pairs two people. A photo without a usable
face scores 0 against everything: a non-match, as a user whose face cannot be found is not matched.

The people are split in two halves (alternately, in the order of their labels). On the first half's pairs
alone the fusion model is fitted (a logistic regression over checks.face_match.fusion_inputs) and a threshold
chosen for it and for dlib's closeness alone (the lowest score whose false match rate has its 95 % upper bound
within TARGET_FALSE_MATCH_RATE); the rates at them are reported on the second half, which played no part in
either. The model and threshold in force (checks.face_match) are the first half's, so its rates on the second
half are the held-out ones; on all pairs they are printed too, flattered by the half they were fitted on.
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
from .statistics import clopper_pearson_interval, clopper_pearson_upper

TARGET_FALSE_MATCH_RATE = 0.001
NEAR_AGE_GAP = 10  # years: the pairs "within 10 years of each other"
ADULT_AGE = 18  # both photos at this age or over: what a live adult against their document looks like
CSV_COLUMNS = ["file_a", "file_b", "same_person", "age_gap", "score", "match"]
_PAIRS_NAME = re.compile(r"^(?P<person>\d+)A(?P<age>\d{1,3})", re.IGNORECASE)
SCORE_DECIMALS = 4


@dataclass(frozen=True)
class PersonPhoto:
    path: Path
    person: str
    age: int


@dataclass(frozen=True)
class Pair:
    a: PersonPhoto
    b: PersonPhoto
    score: float  # the fused score in force (checks.face_match.score)
    inputs: dict[str, float] | None = None  # what the fusion reads (None: a photo without a usable face)

    @property
    def closeness(self) -> float:
        """dlib's closeness alone (1 - descriptor distance)."""
        return self.inputs["closeness"] if self.inputs else 0.0

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

    def fmr_interval(self) -> tuple[float, float]:
        return clopper_pearson_interval(self.false_matches, self.impostor) if self.impostor else (np.nan, np.nan)

    def fnmr_interval(self) -> tuple[float, float]:
        return clopper_pearson_interval(self.false_non_matches, self.genuine) if self.genuine else (np.nan, np.nan)


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

    from checks.face_match import face_descriptor, face_matcher, fused, fusion_inputs
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
        if descriptors[i] is None or descriptors[j] is None:
            pairs.append(Pair(a=a, b=b, score=0.0))
            continue
        inputs = fusion_inputs(descriptors[i], descriptors[j])
        pairs.append(Pair(a=a, b=b, score=round(fused(inputs), SCORE_DECIMALS), inputs=inputs))
    return Scored(pairs=pairs, photos=photos, no_face=sum(d is None for d in descriptors), seconds_per_photo=seconds)


def rates(pairs: Iterable[Pair], threshold: float, scored: Callable[[Pair], float] = lambda pair: pair.score) -> Rates:
    genuine = impostor = fnm = fm = 0
    for pair in pairs:
        matched = scored(pair) >= threshold
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


def choose_threshold(
    pairs: list[Pair],
    scored: Callable[[Pair], float] = lambda pair: pair.score,
    *,
    target: float = TARGET_FALSE_MATCH_RATE,
) -> float | None:
    """The lowest threshold (at the scores' precision) whose false match rate's 95 % upper bound is within
    target: just above the impostor score that would be one false match too many."""
    impostors = sorted((round(scored(pair), SCORE_DECIMALS) for pair in pairs if not pair.same_person), reverse=True)
    if not impostors:
        return None
    allowed = 0
    while allowed < len(impostors) and clopper_pearson_upper(allowed + 1, len(impostors)) <= target:
        allowed += 1
    if allowed == len(impostors):
        return 0.0
    if clopper_pearson_upper(allowed, len(impostors)) > target:
        return None
    return round(impostors[allowed] + 10**-SCORE_DECIMALS, SCORE_DECIMALS)


@dataclass(frozen=True)
class Fusion:
    bias: float
    weights: dict[str, float]


def fit_fusion(pairs: list[Pair]) -> Fusion:
    """The logistic model of checks.face_match's fusion, fitted on pairs whose two photos show a face."""
    from sklearn.linear_model import LogisticRegression

    usable = [pair for pair in pairs if pair.inputs]
    names = list(usable[0].inputs)
    features = np.array([[pair.inputs[name] for name in names] for pair in usable])
    model = LogisticRegression(C=1.0, max_iter=5000).fit(features, [pair.same_person for pair in usable])
    return Fusion(
        bias=round(float(model.intercept_[0]), 3),
        weights={name: round(float(weight), 3) for name, weight in zip(names, model.coef_[0])},
    )


def fused_by(fusion: Fusion) -> Callable[[Pair], float]:
    from checks.face_match import fused

    return lambda pair: fused(pair.inputs, bias=fusion.bias, weights=fusion.weights) if pair.inputs else 0.0


def near(pairs: Iterable[Pair]) -> list[Pair]:
    return [pair for pair in pairs if pair.age_gap <= NEAR_AGE_GAP]


def adults(pairs: Iterable[Pair]) -> list[Pair]:
    return [pair for pair in pairs if min(pair.a.age, pair.b.age) >= ADULT_AGE]


def subsets(pairs: list[Pair]) -> dict[str, list[Pair]]:
    """The pairs every rate is printed for: all, within 10 years, and adults within 10 years."""
    return {
        "all pairs": pairs,
        f"pairs within {NEAR_AGE_GAP} years": near(pairs),
        f"pairs of adults ({ADULT_AGE} or over) within {NEAR_AGE_GAP} years": adults(near(pairs)),
    }


@dataclass(frozen=True)
class HeldOut:
    """One way of scoring, its threshold chosen on the first half of the people, its rates on the second."""

    label: str
    threshold: float | None
    rates: dict[str, Rates]


@dataclass(frozen=True)
class Report:
    threshold: float
    fusion: Fusion  # in force (checks.face_match)
    overall: Rates
    near: Rates
    in_force: dict[str, Rates]  # on all the people
    in_force_held_out: dict[str, Rates]  # on the second half only (the half the model in force never saw)
    refitted: Fusion | None  # fitted on the first half by this run
    held_out: list[HeldOut]
    photos: int
    people: int
    no_face: int
    latency_ms: float  # per comparison: two photos through the matcher, and the score
    latency_p95_ms: float


def _held_out(label: str, first: list[Pair], second: list[Pair], scored: Callable[[Pair], float]) -> HeldOut:
    chosen = choose_threshold(first, scored)
    measured = {} if chosen is None else {name: rates(part, chosen, scored) for name, part in subsets(second).items()}
    return HeldOut(label=label, threshold=chosen, rates=measured)


def summarise(scored: Scored, threshold: float) -> Report:
    from checks.face_match import FUSION_BIAS, FUSION_WEIGHTS

    first_people, second_people = halves(scored.photos)
    first, second = within(scored.pairs, first_people), within(scored.pairs, second_people)
    refitted = fit_fusion(first) if any(pair.inputs for pair in first) and _both_kinds(first) else None
    held_out = [_held_out("dlib's closeness alone (1 - descriptor distance)", first, second, lambda p: p.closeness)]
    if refitted is not None:
        held_out.append(_held_out("fused, refitted on the first half", first, second, fused_by(refitted)))
    per_photo = np.asarray(scored.seconds_per_photo) * 1000
    in_force = {name: rates(part, threshold) for name, part in subsets(scored.pairs).items()}
    return Report(
        threshold=threshold,
        fusion=Fusion(bias=FUSION_BIAS, weights=dict(FUSION_WEIGHTS)),
        overall=in_force["all pairs"],
        near=in_force[f"pairs within {NEAR_AGE_GAP} years"],
        in_force=in_force,
        in_force_held_out={name: rates(part, threshold) for name, part in subsets(second).items()},
        refitted=refitted,
        held_out=held_out,
        photos=len(scored.photos),
        people=len({photo.person for photo in scored.photos}),
        no_face=scored.no_face,
        latency_ms=float(2 * per_photo.mean()),
        latency_p95_ms=float(2 * np.percentile(per_photo, 95)),
    )


def _both_kinds(pairs: list[Pair]) -> bool:
    kinds = {pair.same_person for pair in pairs if pair.inputs}
    return kinds == {True, False}


def _percent(value: float, digits: int) -> str:
    return "n/a" if np.isnan(value) else f"{value:.{digits}%}"


def _rates_line(label: str, measured: Rates) -> str:
    fmr_low, fmr_high = measured.fmr_interval()
    fnmr_low, fnmr_high = measured.fnmr_interval()
    return (
        f"{label}: false match rate {_percent(measured.fmr, 3)} ({measured.false_matches}/{measured.impostor} "
        f"impostor pairs, exact 95% interval {_percent(fmr_low, 3)}-{_percent(fmr_high, 3)}); false non-match rate "
        f"{_percent(measured.fnmr, 1)} ({measured.false_non_matches}/{measured.genuine} genuine pairs, exact 95% "
        f"interval {_percent(fnmr_low, 1)}-{_percent(fnmr_high, 1)})"
    )


def _fusion_text(fusion: Fusion) -> str:
    terms = ", ".join(f"{name} {weight:+.3f}" for name, weight in fusion.weights.items())
    return f"bias {fusion.bias:+.3f}, {terms}"


def report_lines(report: Report) -> list[str]:
    lines = [
        f"photos: {report.photos} of {report.people} people; {report.no_face} without a usable face (they match "
        "nothing)",
        f"in force: fused score = logistic probability ({_fusion_text(report.fusion)}) >= {report.threshold:.4f}; "
        "fitted and chosen on the first half of the people",
        "on all the people (the first half flatters it):",
        *("  " + _rates_line(name, measured) for name, measured in report.in_force.items()),
        "on the second half of the people (held out: no part in the model or the threshold in force):",
        *("  " + _rates_line(name, measured) for name, measured in report.in_force_held_out.items()),
    ]
    if report.refitted is not None:
        lines.append(f"fusion refitted on the first half by this run: {_fusion_text(report.refitted)}")
    else:
        lines.append(
            "fused, refitted on the first half: not fitted (the first half of the people has no genuine or no "
            "impostor pairs with a face in both photos)"
        )
    for way in report.held_out:
        if way.threshold is None:
            lines.append(
                f"{way.label}: no threshold keeps the false match rate's upper bound within "
                f"{TARGET_FALSE_MATCH_RATE:.1%} on the first half of the people"
            )
            continue
        lines.append(
            f"{way.label}: threshold chosen on the first half (false match rate upper bound <= "
            f"{TARGET_FALSE_MATCH_RATE:.1%}): {way.threshold:.4f}; on the second half:"
        )
        lines += ["  " + _rates_line(name, measured) for name, measured in way.rates.items()]
    lines.append(
        f"latency per comparison (two photos: detection, alignment, descriptor, FaceRes's age): mean "
        f"{report.latency_ms:.0f} ms, p95 {report.latency_p95_ms:.0f} ms"
    )
    lines.append(
        f"SUMMARY threshold={report.threshold:.4f} fmr={report.overall.fmr:.4f} fnmr={report.overall.fnmr:.4f} "
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
