"""Which readings of a face, fused with dlib's descriptor score, bring the holder match to its goals?

    .venv/bin/python -m assurance.research.holder_match.feasibility var/holder-match/pairs.npz

Reads the cache of assurance.research.holder_match.extract. The people are split in halves as evaluate_face_match splits
them (alternately in label order); each candidate (a score alone, or a logistic model over several) is fitted
and its threshold chosen on the first half's pairs (the lowest threshold whose false match rate's 95 % upper
bound is within 0.1 %), then reported on the second half: false match rate (all impostor pairs, and those of two
adults), false non-match rate of all genuine pairs, of those within 10 years, and of adults within 10 years.
Candidates: dlib's score; HSE FaceRes's pooled features (cosine, centred on the first half's mean);
MobileFaceNet's cosine; and FaceRes's age reading of the two faces (its expected age, computed from the cached
features by the network's own age head), which tells the model how far apart faces of that age are.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

from assurance.statistics import clopper_pearson_upper

TARGET = 0.001
DESCRIPTION_NETWORK = Path(__file__).resolve().parents[3] / ".age-network" / "face_description_net.onnx"


def unit(values: np.ndarray) -> np.ndarray:
    return values / (np.linalg.norm(values, axis=1, keepdims=True) + 1e-12)


def faceres_ages(features: np.ndarray) -> np.ndarray:
    """FaceRes's expected age (years) from its pooled features, through the network's own age head."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(DESCRIPTION_NETWORK)).graph
    w = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in graph.initializer}
    hidden = np.maximum(features @ w["feats/Relu/kernel"] + w["feats/Relu/bias"], 0)
    logits = hidden @ w["age_pred/BiasAdd/kernel"] + w["age_pred/BiasAdd/bias"]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ np.arange(1, 101)


def threshold_for(scores: np.ndarray, genuine: np.ndarray) -> float:
    """The lowest threshold whose false match rate's 95 % upper bound is within TARGET."""
    impostor = np.sort(scores[~genuine])[::-1]
    for k in range(len(impostor)):
        if clopper_pearson_upper(k + 1, len(impostor)) > TARGET:
            return float(impostor[k]) + 1e-9
    return float("-inf")


def report(label: str, scores: np.ndarray, pairs: dict, threshold: float) -> None:
    matched = scores >= threshold
    genuine, near, adult = pairs["genuine"], pairs["near"], pairs["adult"]
    fm, imp = int((matched & ~genuine).sum()), int((~genuine).sum())
    parts = [
        f"{label}: FMR {fm}/{imp} = {fm / imp:.3%} (upper {clopper_pearson_upper(fm, imp):.3%})",
        f"adult impostors {int((matched & ~genuine & adult).sum())}/{int((~genuine & adult).sum())}",
    ]
    for name, mask in (("all", genuine), ("10y", genuine & near), ("adults 10y", genuine & near & adult)):
        fnm, total = int((~matched & mask).sum()), int(mask.sum())
        parts.append(f"FNMR {name} {fnm}/{total} = {fnm / total:.1%}")
    print("; ".join(parts))


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    parser = argparse.ArgumentParser()
    parser.add_argument("cache")
    data = np.load(parser.parse_args().cache)
    people, ages = data["people"], data["ages"]
    found = ~np.isnan(data["dlib"][:, 0])
    print(f"{found.sum()} of {len(found)} photos with a face")
    dlib, faceres = np.nan_to_num(data["dlib"]), np.nan_to_num(data["faceres"])
    mobilefacenet = unit(np.nan_to_num(data["mobilefacenet"]))
    estimated = faceres_ages(faceres)
    print(f"FaceRes's age on these photos: mean absolute error {np.abs(estimated - ages)[found].mean():.1f} years")
    ordered = sorted(set(people))
    first, second = set(ordered[0::2]), set(ordered[1::2])
    centred = unit(faceres - faceres[found & np.isin(people, list(first))].mean(axis=0))

    def pairs_of(keep: set[str]) -> dict:
        rows = [i for i, person in enumerate(people) if person in keep]
        a, b = np.array(list(itertools.combinations(rows, 2))).T
        ok = found[a] & found[b]
        young = np.log1p(np.minimum(estimated[a], estimated[b]))
        scores = {
            "dlib": np.where(ok, 1 - np.linalg.norm(dlib[a] - dlib[b], axis=1), 0.0),
            "faceres": np.where(ok, (centred[a] * centred[b]).sum(axis=1), -1.0),
            "mobilefacenet": np.where(ok, (mobilefacenet[a] * mobilefacenet[b]).sum(axis=1), -1.0),
            "younger age": np.where(ok, young, 0.0),
        }
        scores["dlib x younger age"] = scores["dlib"] * scores["younger age"]
        return {
            "scores": scores,
            "genuine": people[a] == people[b],
            "near": np.abs(ages[a] - ages[b]) <= 10,
            "adult": np.minimum(ages[a], ages[b]) >= 18,
        }

    train, test = pairs_of(first), pairs_of(second)
    for name in ("dlib", "faceres", "mobilefacenet"):
        auc = roc_auc_score(test["genuine"], test["scores"][name])
        threshold = threshold_for(train["scores"][name], train["genuine"])
        report(f"{name} alone (ROC AUC {auc:.3f}, threshold {threshold:.3f})", test["scores"][name], test, threshold)
    for columns in (
        ["dlib", "faceres"],
        ["dlib", "mobilefacenet"],
        ["dlib", "younger age"],
        ["dlib", "younger age", "dlib x younger age"],
        ["dlib", "faceres", "younger age", "dlib x younger age"],
    ):
        fit = np.column_stack([train["scores"][c] for c in columns])
        model = LogisticRegression(C=1.0, max_iter=2000).fit(fit, train["genuine"])
        threshold = threshold_for(model.decision_function(fit), train["genuine"])
        held_out = model.decision_function(np.column_stack([test["scores"][c] for c in columns]))
        report(f"fused {' + '.join(columns)}", held_out, test, threshold)


def second_round(data) -> None:
    """Issue 44's second round, on a cache written by the extract of that round (dlib's face and mirror alone,
    its other paddings, face-api's age, the faces found again enlarged). Same halves, same threshold rule."""
    from sklearn.linear_model import LogisticRegression

    people, ages = data["people"], data["ages"]
    found = ~np.isnan(data["dlib"][:, 0]) & ~data["upsampled"]  # what the production path finds
    enlarged = ~np.isnan(data["dlib"][:, 0])  # and with the faces found again in the enlarged picture
    print(f"{found.sum()} of {len(found)} photos with a face; {enlarged.sum()} when enlarged where none was found")
    ordered = sorted(set(people))
    first, second = set(ordered[0::2]), set(ordered[1::2])
    faceres = np.nan_to_num(data["faceres"])
    centred = unit(faceres - faceres[found & np.isin(people, list(first))].mean(axis=0))
    faceres_age = np.nan_to_num(data["faceres_age"][:, 0])
    faceapi_age = np.nan_to_num(data["faceapi_age"][:, 0])
    print(
        "mean absolute error of the age, years: FaceRes "
        f"{np.abs(faceres_age - ages)[found].mean():.1f}, face-api {np.abs(faceapi_age - ages)[found].mean():.1f}, "
        f"their mean {np.abs((faceres_age + faceapi_age) / 2 - ages)[found].mean():.1f}"
    )

    def closeness(values: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.clip(1 - np.linalg.norm(np.nan_to_num(values[a]) - np.nan_to_num(values[b]), axis=1), 0, 1)

    def pairs_of(keep: set[str], usable: np.ndarray) -> dict:
        rows = [i for i, person in enumerate(people) if person in keep]
        a, b = np.array(list(itertools.combinations(rows, 2))).T
        ok = usable[a] & usable[b]
        both = (faceres_age + faceapi_age) / 2
        columns = {
            "dlib": closeness(data["dlib"], a, b),
            "dlib face only": closeness(data["dlib_face"], a, b),
            "dlib padded 15%": closeness(data["dlib_pad15"], a, b),
            "dlib padded 35%": closeness(data["dlib_pad35"], a, b),
            "faceres": (centred[a] * centred[b]).sum(axis=1),
            "younger age": np.log1p(np.minimum(faceres_age[a], faceres_age[b])),
            "younger age (both readers)": np.log1p(np.minimum(both[a], both[b])),
            "older age": np.log1p(np.maximum(faceres_age[a], faceres_age[b])),
            "age gap": np.abs(np.log1p(faceres_age[a]) - np.log1p(faceres_age[b])),
            "older age (both readers)": np.log1p(np.maximum(both[a], both[b])),
            "age gap (both readers)": np.abs(np.log1p(both[a]) - np.log1p(both[b])),
        }
        third = {"dlib jittered": "dlib_jitter", "dlib shifted": "dlib_shift", "dlib grey": "dlib_grey",
                 "dlib equalised": "dlib_equalised"}  # fmt: skip
        for name, column in third.items():
            if column in data:  # the third round's extract
                columns[name] = closeness(data[column], a, b)
        columns = {name: np.where(ok, values, 0.0) for name, values in columns.items()}
        matchers = ("dlib", "dlib face only", "dlib padded 15%", "dlib padded 35%", "faceres", "dlib jittered")
        for matcher in (m for m in (*matchers, "dlib shifted", "dlib grey", "dlib equalised") if m in columns):
            columns[f"{matcher} x younger age"] = columns[matcher] * columns["younger age"]
            columns[f"{matcher} x age gap"] = columns[matcher] * columns["age gap"]
        for reading in ("younger age (both readers)", "older age (both readers)", "age gap (both readers)"):
            columns[f"dlib x {reading}"] = columns["dlib"] * columns[reading]
        return {
            "scores": columns,
            "ok": ok,
            "genuine": people[a] == people[b],
            "near": np.abs(ages[a] - ages[b]) <= 10,
            "adult": np.minimum(ages[a], ages[b]) >= 18,
        }

    def fitted(columns, train, C, tail, weight):
        fit = np.column_stack([train["scores"][c] for c in columns])
        chosen = train["ok"] & (train["scores"]["dlib"] >= tail)
        model = LogisticRegression(C=C, max_iter=5000, class_weight=weight).fit(fit[chosen], train["genuine"][chosen])

        def scored(pairs: dict) -> np.ndarray:
            values = model.decision_function(np.column_stack([pairs["scores"][c] for c in columns]))
            return np.where(pairs["ok"], values, -np.inf)  # a photo without a face matches nothing

        return scored, threshold_for(scored(train), train["genuine"])

    # Choosing among the candidates uses the first half only: its people split again in two (alternately), each
    # fold fitted and thresholded on the other, the counts of both folds added. The second half only reports.
    folds = (set(sorted(first)[0::2]), set(sorted(first)[1::2]))

    def cross_validated(columns, usable, C, tail, weight) -> str:
        fm = imp = fnm10 = g10 = fnma = ga = 0
        for fit_on, judge_on in (folds, folds[::-1]):
            train, test = pairs_of(fit_on, usable), pairs_of(judge_on, usable)
            scored, threshold = fitted(columns, train, C, tail, weight)
            matched = scored(test) >= threshold
            genuine, near, adult = test["genuine"], test["near"], test["adult"]
            fm, imp = fm + int((matched & ~genuine).sum()), imp + int((~genuine).sum())
            fnm10, g10 = fnm10 + int((~matched & genuine & near).sum()), g10 + int((genuine & near).sum())
            fnma, ga = fnma + int((~matched & genuine & near & adult).sum()), ga + int((genuine & near & adult).sum())
        return f"FMR {fm}/{imp} = {fm / imp:.3%}; FNMR 10y {fnm10}/{g10} = {fnm10 / g10:.1%}; adults 10y {fnma}/{ga}"

    def fuse(
        label: str, columns: list[str], usable: np.ndarray = found, C: float = 1.0, tail: float = 0.0, weight=None
    ) -> None:
        train, test = pairs_of(first, usable), pairs_of(second, usable)
        scored, threshold = fitted(columns, train, C, tail, weight)
        print(f"{label}: {' + '.join(columns)}")
        print(f"  first half, cross-validated: {cross_validated(columns, usable, C, tail, weight)}")
        report("  second half", scored(test), test, threshold)

    production = ["dlib", "younger age", "dlib x younger age"]
    fuse("in force", production)
    if "dlib_jitter" in data:
        fuse("jittered: 8 small changes of the chip, each with its mirror", ["dlib jittered", "younger age",
             "dlib jittered x younger age"])  # fmt: skip
        fuse("shifted: 5 shifts of the chip, face alone", ["dlib shifted", "younger age", "dlib shifted x younger age"])
    if "dlib_grey" in data:
        fuse("grey: the chip in grey, with its mirror", ["dlib grey", "younger age", "dlib grey x younger age"])
        fuse("equalised: the grey chip's histogram equalised, with its mirror", ["dlib equalised", "younger age",
             "dlib equalised x younger age"])  # fmt: skip
    if "--third-round" in sys.argv:
        return
    fuse("no mirror", ["dlib face only", "younger age", "dlib face only x younger age"])
    fuse("padding 15% (face only)", ["dlib padded 15%", "younger age", "dlib padded 15% x younger age"])
    fuse("padding 35% (face only)", ["dlib padded 35%", "younger age", "dlib padded 35% x younger age"])
    fuse("faces found enlarged too", production, usable=enlarged)
    fuse("both readers' age", ["dlib", "younger age (both readers)", "dlib x younger age (both readers)"])
    fuse("with the older age", [*production, "older age"])
    fuse("age-gap aware", [*production, "age gap", "dlib x age gap"])
    fuse("faceres second matcher", [*production, "faceres"])
    fuse("faceres second matcher, age-aware", [*production, "faceres", "faceres x younger age"])
    fuse("faceres alone, age-aware", ["faceres", "younger age", "faceres x younger age"])
    both = ["dlib", "younger age (both readers)", "dlib x younger age (both readers)"]
    fuse("both readers' age, with the older age", [*both, "older age (both readers)"])
    fuse("both readers' age, with the older age, enlarged", [*both, "older age (both readers)"], usable=enlarged)
    fuse("both readers' age, older age x dlib", [*both, "older age (both readers)", "dlib x older age (both readers)"])
    fuse("both readers' age, age-gap aware", [*both, "age gap (both readers)", "dlib x age gap (both readers)"])
    fuse("in force, fitted on the pairs closer than 0.4", production, tail=0.4)
    fuse("in force, fitted on the pairs closer than 0.5", production, tail=0.5)
    fuse("in force, balanced classes", production, weight="balanced")
    fuse("both, older, fitted on the pairs closer than 0.4", [*both, "older age (both readers)"], tail=0.4)
    fuse("both, older, balanced", [*both, "older age (both readers)"], weight="balanced")
    fuse("both, older, C=100", [*both, "older age (both readers)"], C=100)
    fuse("everything", [*production, "faceres", "faceres x younger age", "age gap", "dlib x age gap", "older age"])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("--second-round", "--third-round"):
        second_round(np.load(sys.argv[2]))
    else:
        main()
