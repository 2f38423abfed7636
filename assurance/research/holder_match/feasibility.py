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


if __name__ == "__main__":
    main()
