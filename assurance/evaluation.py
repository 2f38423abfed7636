"""Evaluation of the face path on labelled faces: the production selfie path minus liveness, summed up.

For every image: decode, face detection, the one-dominant-face rule, the age estimator and the decision
rule with the policy in force for a tenant on default settings (liveness taken as passed). The
outcome per image is `approved`, `requires_doc` or `retake` for each age limit asked. One image is read
as a capture of one frame: the flow decides on the median of a capture's frontal frames, which for one
frame is that frame's estimate, so this is the live rule; bench/frame_aggregate.py measures captures of three.

Shares are counted over the faces found (a retake is neither an approval nor a document request), so
a detector that misses children cannot flatter the approval rates. Each share carries the upper end of
its two-sided 95 % Clopper-Pearson interval: what the data can vouch for, not only what it showed.
"""

from __future__ import annotations

import csv
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .labels import LabelledFace
from .processes import forked_map
from .statistics import clopper_pearson_upper

DEFAULT_LIMITS = (13, 16, 18, 21)
BANDS = (("<13", 0, 12), ("13-17", 13, 17), ("18-24", 18, 24), ("25-40", 25, 40), ("41-60", 41, 60), ("60+", 61, 10**3))
NEAR_BAND_YEARS = 5  # faces aged limit-5 .. limit-1: the minors a face estimate most easily lets through
CHILDREN_FROM = 6  # children aged 6 .. limit-6 (CONTRACT 3): at most 0.1 % of them may pass
ADULT_MARGIN_YEARS = 7  # adults aged max(25, limit+7) .. 40: the share of them sent to a document is the friction
ADULTS_UNTIL = 40
ADULT_AGE_BAND_YEARS = 5  # the adult band cut into bands this wide, to compare sets at equal ages


def child_band(limit: int) -> tuple[int, int]:
    """Children aged 6 .. limit-6 (empty below limit 12)."""
    return CHILDREN_FROM, limit - NEAR_BAND_YEARS - 1


def adult_band(limit: int) -> tuple[int, int]:
    """Adults aged max(25, limit+7) .. 40: who should not need a document."""
    return max(25, limit + ADULT_MARGIN_YEARS), ADULTS_UNTIL


def adult_age_bands(limit: int) -> list[tuple[int, int]]:
    """The adult band cut into five-year bands; a remainder under three years joins the band before it."""
    low, high = adult_band(limit)
    bands = [
        (start, min(start + ADULT_AGE_BAND_YEARS - 1, high)) for start in range(low, high + 1, ADULT_AGE_BAND_YEARS)
    ]
    if len(bands) > 1 and bands[-1][1] - bands[-1][0] < 2:
        bands[-2:] = [(bands[-2][0], high)]
    return bands


APPROVED, REQUIRES_DOC, RETAKE = "approved", "requires_doc", "retake"


@dataclass(frozen=True)
class Outcome:
    """What the production path made of one labelled image."""

    face: LabelledFace
    estimated_age: float | None  # None: no usable face (the user would be asked to retake)
    decisions: dict[int, str]  # age limit -> approved | requires_doc | retake
    seconds: float

    @property
    def face_found(self) -> bool:
        return self.estimated_age is not None


@dataclass(frozen=True)
class Share:
    count: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.count / self.total if self.total else None

    @property
    def variance(self) -> float | None:
        """The binomial variance of the rate (its normal approximation)."""
        return self.rate * (1 - self.rate) / self.total if self.total else None

    @property
    def upper(self) -> float | None:
        return clopper_pearson_upper(self.count, self.total) if self.total else None

    def __str__(self) -> str:
        if not self.total:
            return "n/a (no faces)"
        return f"{100 * self.rate:5.1f} % ({self.count}/{self.total}, 95 % upper {100 * self.upper:.1f} %)"


@dataclass(frozen=True)
class LimitReport:
    age_limit: int
    near_approved: Share  # faces aged limit-5 .. limit-1 approved on the face alone
    younger_approved: Share  # children aged 6 .. limit-6 approved
    adults_to_document: Share  # adults aged max(25, limit+7) .. 40 sent to the document step
    by_group: dict[str, dict[str, tuple[Share, Share, Share]]] = field(default_factory=dict)
    # the adults sent to the document step, per band of adult_age_bands: (low, high) -> share
    adults_by_age: dict[tuple[int, int], Share] = field(default_factory=dict)


@dataclass(frozen=True)
class BandReport:
    band: str
    faces: int
    mae: float | None
    bias: float | None  # mean signed error, estimate minus true age


@dataclass(frozen=True)
class Report:
    images: int
    faces_found: int
    unlabelled: int
    overall: BandReport
    bands: list[BandReport]
    limits: list[LimitReport]
    latency_ms: dict[str, float]
    # attribute -> group -> (all ages, aged 13-17): the estimate's error per labelled group
    group_errors: dict[str, dict[str, tuple[BandReport, BandReport]]] = field(default_factory=dict)
    oldest_looking_child: tuple[int, float] | None = None  # (true age, estimate) of the highest estimate under 13


# The production path for one image: bytes in, (estimated age or None, decision per limit) out.
Assess = Callable[[bytes, Sequence[int]], tuple[float | None, dict[int, str]]]


def evaluate(
    faces: Iterable[LabelledFace],
    limits: Sequence[int],
    *,
    assess: Assess | None = None,
    progress: Callable[[int], None] | None = None,
    jobs: int = 1,
) -> list[Outcome]:
    """Run every labelled image through the production path, one at a time per process (`jobs` processes)."""
    faces = list(faces)
    if jobs > 1 and assess is None and len(faces) > jobs:
        return _evaluate_in_processes(faces, limits, jobs, progress)
    assess = assess or production_assess()
    if faces:
        assess(faces[0].path.read_bytes(), limits)  # loads the models, so latency is per image only
    outcomes = []
    for number, face in enumerate(faces, start=1):
        outcomes.append(_timed(assess, face, limits))
        if progress is not None:
            progress(number)
    return outcomes


def evaluate_cached(
    faces: Sequence[LabelledFace], limits: Sequence[int], *, cache, jobs: int = 1, progress=None
) -> list[Outcome]:
    """The production path with the networks' outputs read from calibrate_age_policy's cache (keyed by the image's
    bytes and the networks' hashes; images it lacks are read through the networks and added): the readers in
    force and the decision as in evaluate(), untimed (`seconds` is NaN: the networks did not run here)."""
    from checks.age_heads import age_heads
    from checks.results import AgeReading, Liveness
    from sessions_api.age_policy import tenant_default_face_rule
    from sessions_api.decision import decide_selfie

    from .readers import read_all, read_inputs

    inputs = read_inputs(faces, cache=cache, progress=progress, jobs=jobs)
    found = [i for i in inputs if i.found]
    estimates, opinions = read_all(age_heads(), found)
    readings = iter(zip(estimates, opinions))
    rules = {limit: tenant_default_face_rule(limit) for limit in limits}
    live = Liveness(is_live=True, liveness_score=1.0)
    outcomes = []
    for face, face_inputs in zip(faces, inputs):
        if not face_inputs.found:
            outcomes.append(Outcome(face, None, dict.fromkeys(limits, RETAKE), float("nan")))
            continue
        estimate, opinion = (float(x) for x in next(readings))
        reading = AgeReading(estimated_age=estimate, faces_used=1, lowest_estimate=estimate, second_opinion=opinion)
        decisions = {
            limit: _outcome_name(decide_selfie(live, reading, rule=rule, attempts_so_far=0))
            for limit, rule in rules.items()
        }
        outcomes.append(Outcome(face, estimate, decisions, float("nan")))
    return outcomes


def _timed(assess: Assess, face: LabelledFace, limits: Sequence[int]) -> Outcome:
    data = face.path.read_bytes()
    started = time.perf_counter()
    estimated_age, decisions = assess(data, limits)
    return Outcome(face, estimated_age, decisions, time.perf_counter() - started)


_worker_assess: Assess | None = None


def _worker_run(job: tuple[LabelledFace, tuple[int, ...]]) -> Outcome:
    global _worker_assess
    face, limits = job
    if _worker_assess is None:
        _worker_assess = production_assess()
        _worker_assess(face.path.read_bytes(), limits)  # loads the models in this process
    return _timed(_worker_assess, face, limits)


def _evaluate_in_processes(faces, limits, jobs, progress) -> list[Outcome]:
    """The same production path in `jobs` forked processes, results in the faces' order."""
    outcomes = []
    for number, outcome in enumerate(forked_map(_worker_run, [(f, tuple(limits)) for f in faces], jobs), start=1):
        outcomes.append(outcome)
        if progress is not None:
            progress(number)
    return outcomes


def production_assess() -> Assess:
    """The selfie path of sessions_api.analysis minus liveness, under the policy for default tenant settings."""
    from checks.age import estimate_age
    from checks.results import Liveness, Retake
    from sessions_api.age_policy import tenant_default_face_rule
    from sessions_api.decision import decide_selfie

    live = Liveness(is_live=True, liveness_score=1.0)
    rules = {}

    def assess(data: bytes, limits: Sequence[int]) -> tuple[float | None, dict[int, str]]:
        reading = estimate_age(data)
        decisions = {}
        for limit in limits:
            if limit not in rules:
                rules[limit] = tenant_default_face_rule(limit)
            decisions[limit] = _outcome_name(decide_selfie(live, reading, rule=rules[limit], attempts_so_far=0))
        return (None if isinstance(reading, Retake) else reading.estimated_age), decisions

    return assess


def _outcome_name(decision) -> str:
    if decision.is_retake:
        return RETAKE
    return APPROVED if decision.to_status == APPROVED else REQUIRES_DOC


def summarise(outcomes: Sequence[Outcome], limits: Sequence[int], *, unlabelled: int = 0) -> Report:
    found = [o for o in outcomes if o.face_found]
    seconds = sorted(o.seconds for o in outcomes if o.seconds == o.seconds)  # NaN: not timed (evaluate_cached)
    return Report(
        images=len(outcomes),
        faces_found=len(found),
        unlabelled=unlabelled,
        overall=_band("all", found),
        bands=[_band(name, [o for o in found if low <= o.face.true_age <= high]) for name, low, high in BANDS],
        limits=[_limit_report(outcomes, limit) for limit in limits],
        group_errors=_group_errors(found),
        oldest_looking_child=max(
            ((o.face.true_age, o.estimated_age) for o in found if o.face.true_age < 13),
            key=lambda pair: pair[1],
            default=None,
        ),
        latency_ms={
            "mean": 1000 * statistics.fmean(seconds),
            "median": 1000 * statistics.median(seconds),
            "p95": 1000 * seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))],
        }
        if seconds
        else {},
    )


def _band(name: str, outcomes: Sequence[Outcome]) -> BandReport:
    errors = [o.estimated_age - o.face.true_age for o in outcomes]
    if not errors:
        return BandReport(name, 0, None, None)
    return BandReport(name, len(errors), statistics.fmean(map(abs, errors)), statistics.fmean(errors))


def _group_errors(found: Sequence[Outcome]) -> dict[str, dict[str, tuple[BandReport, BandReport]]]:
    errors = {}
    for attribute in ("gender", "ethnicity"):
        groups = sorted({getattr(o.face, attribute) for o in found} - {None})
        if groups:
            errors[attribute] = {}
            for group in groups:
                members = [o for o in found if getattr(o.face, attribute) == group]
                errors[attribute][group] = (
                    _band("all", members),
                    _band("13-17", [o for o in members if 13 <= o.face.true_age <= 17]),
                )
    return errors


def limit_shares(outcomes: Sequence[Outcome], limit: int) -> tuple[Share, Share, Share]:
    """(near minors approved, younger approved, adults sent to the document step) among faces found."""
    near = [o for o in outcomes if limit - NEAR_BAND_YEARS <= o.face.true_age < limit]
    child_low, child_high = child_band(limit)
    younger = [o for o in outcomes if child_low <= o.face.true_age <= child_high]
    adult_low, adult_high = adult_band(limit)
    adults = [o for o in outcomes if adult_low <= o.face.true_age <= adult_high]
    return (
        Share(sum(o.decisions[limit] == APPROVED for o in near), len(near)),
        Share(sum(o.decisions[limit] == APPROVED for o in younger), len(younger)),
        Share(sum(o.decisions[limit] == REQUIRES_DOC for o in adults), len(adults)),
    )


def _limit_report(outcomes: Sequence[Outcome], limit: int) -> LimitReport:
    found = [o for o in outcomes if o.face_found]
    by_group = {}
    for attribute in ("gender", "ethnicity"):
        # Every labelled group is listed, even one whose faces were all missed (its shares read n/a).
        groups = sorted({getattr(o.face, attribute) for o in outcomes} - {None})
        if groups:
            by_group[attribute] = {
                group: limit_shares([o for o in found if getattr(o.face, attribute) == group], limit)
                for group in groups
            }
    adults_by_age = {}
    for low, high in adult_age_bands(limit):
        adults = [o for o in found if low <= o.face.true_age <= high]
        adults_by_age[low, high] = Share(sum(o.decisions[limit] == REQUIRES_DOC for o in adults), len(adults))
    return LimitReport(limit, *limit_shares(found, limit), by_group=by_group, adults_by_age=adults_by_age)


def at_age_mix(shares: dict[tuple[int, int], Share], mix: dict[tuple[int, int], Share]) -> tuple[float, float] | None:
    """A share at another age mix (direct standardisation), and its variance: each band's rate weighted by the
    mix's faces in it (the weights taken as fixed, each band binomial).

    None when a band the mix holds faces in has none here (its rate is unknown)."""
    total = sum(band.total for band in mix.values())
    if not total or any(mix[band].total and not shares[band].total for band in mix):
        return None
    weights = {band: mix[band].total / total for band in mix if mix[band].total}
    rate = sum(weight * shares[band].rate for band, weight in weights.items())
    variance = sum(weight**2 * shares[band].variance for band, weight in weights.items())
    return rate, variance


def _years(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "   n/a"
    return f"{value:+6.1f}" if signed else f"{value:6.1f}"


def report_lines(report: Report) -> list[str]:
    """The printed report; the last line starts with SUMMARY and holds the headline numbers."""
    lines = [
        f"images: {report.images}   faces found: {report.faces_found} "
        f"({100 * report.faces_found / max(report.images, 1):.1f} %)"
        + (f"   unlabelled images left out: {report.unlabelled}" if report.unlabelled else ""),
        "",
        "age band   faces     MAE   mean signed error (years)",
    ]
    for band in [*report.bands, report.overall]:
        lines.append(f"{band.band:<8} {band.faces:7d}  {_years(band.mae)}   {_years(band.bias, signed=True)}")
    for limit in report.limits:
        low = limit.age_limit - NEAR_BAND_YEARS
        child_low, child_high = child_band(limit.age_limit)
        adult_low, adult_high = adult_band(limit.age_limit)
        lines += [
            "",
            f"age limit {limit.age_limit}",
            f"  aged {low}-{limit.age_limit - 1} approved on the face alone: {limit.near_approved}",
            f"  children aged {child_low}-{child_high} approved:        {limit.younger_approved}",
            f"  aged {adult_low}-{adult_high} sent to the document step:   {limit.adults_to_document}",
            "    by age: "
            + " | ".join(f"{low}-{high} {_pct(share)}" for (low, high), share in limit.adults_by_age.items()),
        ]
        for attribute, groups in limit.by_group.items():
            lines.append(f"  by {attribute}: near approved | younger approved | adults to document")
            for group, (near, younger, adults) in groups.items():
                lines.append(f"    {group:<8} {_pct(near)} | {_pct(younger)} | {_pct(adults)}")
    latency = report.latency_ms
    lines += [
        "",
        f"latency per image: mean {latency['mean']:.0f} ms, median {latency['median']:.0f} ms, "
        f"p95 {latency['p95']:.0f} ms (one process)"
        if latency
        else "latency per image: not timed (the networks' outputs were read from the cache)",
        summary_line(report),
    ]
    return lines


def _pct(share: Share) -> str:
    return f"{'n/a':>16}" if not share.total else f"{100 * share.rate:5.1f} % of {share.total:<5d}"


def summary_line(report: Report) -> str:
    teens = next(band for band in report.bands if band.band == "13-17")
    parts = [
        f"images={report.images}",
        f"faces={report.faces_found}",
        f"mae={_num(report.overall.mae)}",
        f"mae_13_17={_num(teens.mae)}",
        f"bias_13_17={_num(teens.bias, True)}",
    ]
    for limit in report.limits:
        tag = f"L{limit.age_limit}"
        parts += [
            f"{tag}_near_approved={_rate(limit.near_approved)}",
            f"{tag}_younger_approved={_rate(limit.younger_approved)}",
            f"{tag}_adults_to_doc={_rate(limit.adults_to_document)}",
        ]
    parts.append(f"latency_ms={report.latency_ms['mean']:.0f}" if report.latency_ms else "latency_ms=n/a")
    return "SUMMARY " + " ".join(parts)


def _num(value: float | None, signed: bool = False) -> str:
    return "n/a" if value is None else (f"{value:+.2f}" if signed else f"{value:.2f}")


def _rate(share: Share) -> str:
    return "n/a" if not share.total else f"{100 * share.rate:.2f}%"


def csv_write(outcomes: Sequence[Outcome], limits: Sequence[int], handle) -> None:
    """One row per image: file,true_age,face_found,estimated_age,decision_<limit>..."""
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(["file", "true_age", "face_found", "estimated_age", *(f"decision_{limit}" for limit in limits)])
    for o in outcomes:
        writer.writerow(
            [
                o.face.name,
                o.face.true_age,
                "true" if o.face_found else "false",
                "" if o.estimated_age is None else f"{o.estimated_age:.2f}",
                *(o.decisions[limit] for limit in limits),
            ]
        )


# --- fairness at matched ages ------------------------------------------------------------------

FAIRNESS_BANDS = ((25, 30), (31, 35), (36, 40))  # the adult band cut where the friction changes
FAIRNESS_MIN_ADULTS = 100  # groups compared for the largest gap from this many adults in the band


def fairness_groups(set_names: Sequence[str], ethnicities: Sequence[str | None]) -> dict[str, np.ndarray]:
    """The groups the fairness table compares: each set, and faces-dev (UTKFace) by its race label. A set
    named `<set>-adults` (the extra All-Age-Faces adults) joins `<set>`. Labels name groups only: no rule reads them."""
    sets = np.array([name.removesuffix("-adults") for name in set_names])
    groups = {name: sets == name for name in dict.fromkeys(sets)}
    races = np.array([race or "" for race in ethnicities])
    for name in list(groups):
        for race in sorted(set(races[sets == name]) - {""}):
            groups[f"{name} {race}"] = (sets == name) & (races == race)
    return groups


def matched_ages(true_ages: np.ndarray, to_document: np.ndarray, groups: dict[str, np.ndarray], limit: int) -> dict:
    """Adults max(25, limit+7)..40 sent to a document, per group: as measured, per band of FAIRNESS_BANDS, and at
    the pooled faces' mix of ages (direct standardisation by year of age: each year's share in the group weighted
    by the pooled faces of that year; years a group has no face of are left out and the weights renormalised,
    `covered` saying how much of the pooled mix remained). Variances: each year binomial, weights fixed."""
    low, high = adult_band(limit)
    ages = np.asarray(true_ages)
    adults = (ages >= low) & (ages <= high)
    years = np.arange(low, high + 1)
    pooled = np.array([(adults & (ages == year)).sum() for year in years], dtype=float)
    bands = [(max(a, low), b) for a, b in FAIRNESS_BANDS if b >= low]
    table = {}
    for name, members in {"all": np.ones(len(ages), dtype=bool), **groups}.items():
        chosen = members & adults
        n = np.array([(chosen & (ages == year)).sum() for year in years], dtype=float)
        sent = np.array([(chosen & (ages == year) & to_document).sum() for year in years], dtype=float)
        inside = {f"{a}-{b}": (years >= a) & (years <= b) for a, b in bands}
        entry = {
            "adults": int(n.sum()),
            "as_measured": _share_dict(int(sent.sum()), int(n.sum())),
            "by_band": {band: _share_dict(int(sent[y].sum()), int(n[y].sum())) for band, y in inside.items()},
        }
        present = (n > 0) & (pooled > 0)
        if present.any():
            weights = pooled[present] / pooled[present].sum()
            rates = sent[present] / n[present]
            smoothed = (sent[present] + 0.5) / (n[present] + 1)  # a year of one face still carries variance
            entry["at_pooled_ages"] = float(weights @ rates)
            entry["variance"] = float((weights**2) @ (smoothed * (1 - smoothed) / n[present]))
            entry["covered"] = float(pooled[present].sum() / pooled.sum())
        else:
            entry["at_pooled_ages"] = entry["variance"] = entry["covered"] = None
        table[name] = entry
    sets = [name for name in groups if " " not in name and table[name]["adults"] >= FAIRNESS_MIN_ADULTS]
    gap = None
    if len(sets) > 1:
        highest = max(sets, key=lambda name: table[name]["at_pooled_ages"])
        lowest = min(sets, key=lambda name: table[name]["at_pooled_ages"])
        points = table[highest]["at_pooled_ages"] - table[lowest]["at_pooled_ages"]
        margin = 1.959964 * (table[highest]["variance"] + table[lowest]["variance"]) ** 0.5
        gap = {"highest": highest, "lowest": lowest, "gap": points, "low": points - margin, "high": points + margin}
    return {"bands": [f"{a}-{b}" for a, b in bands], "groups": table, "largest_gap": gap}


def _share_dict(count: int, total: int) -> dict:
    return {"count": count, "of": total, "share": count / total if total else None}


def matched_ages_lines(table: dict, limit: int) -> list[str]:
    """The fairness table as printed by calibrate_age_policy (plain text)."""
    low, high = adult_band(limit)
    lines = [
        f"  limit {limit}: adults {low}-{high} sent to a document, by group"
        f" (as measured | {' | '.join(table['bands'])} | at the pooled ages by year, coverage)"
    ]
    for name, entry in table["groups"].items():
        cells = [_share_text(entry["as_measured"]), *(_share_text(entry["by_band"][b]) for b in table["bands"])]
        pooled = "n/a"
        if entry["at_pooled_ages"] is not None:
            pooled = f"{100 * entry['at_pooled_ages']:5.1f} % ({100 * entry['covered']:.0f} %)"
        lines.append(f"    {name:<22} " + " | ".join(cells) + f" | {pooled}")
    gap = table["largest_gap"]
    if gap:
        lines.append(
            f"    largest gap at the pooled ages: {gap['highest']} - {gap['lowest']} = {100 * gap['gap']:.1f} points "
            f"(95 % interval {100 * gap['low']:.1f} to {100 * gap['high']:.1f})"
        )
    return lines


def _share_text(share: dict) -> str:
    return f"{'n/a':>16}" if not share["of"] else f"{100 * share['share']:5.1f} % of {share['of']:<5d}"
