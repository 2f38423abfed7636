"""The original and the fine-tuned FaceRes on the test fold only (fold 5: no epoch, no weight chose it).

    .venv/bin/python -m assurance.research.faceres_finetune.evaluate --crops /work/research-cache/faceres-crops.npz \
        --fine-tuned /work/research-cache/faceres-finetune/best.onnx

Both networks are read by checks.faces `described()`, as the engine reads one (onnxruntime, face and mirror averaged,
expected age over 1..100); the original's ages are checked against the engine's own on a few faces.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from checks.faces import described

from . import data as crops_data

BANDS = (("6-12", 6, 12), ("13-17", 13, 17), ("18-24", 18, 24), ("25-40", 25, 40), ("41+", 41, 200))
BOOTSTRAP = 2000
BOOTSTRAP_SEED = 20261127


def expected_ages(onnx_path: Path, crops: np.ndarray, batch: int = 32) -> np.ndarray:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 2
    session = onnxruntime.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    return np.concatenate([described(session, list(crops[start : start + batch]))[1]
                           for start in range(0, len(crops), batch)])  # fmt: skip


def set_lines(label: str, predicted: np.ndarray, ages: np.ndarray, sets: np.ndarray) -> list[str]:
    lines = [f"{label}"]
    for name in crops_data.SETS:
        mine = sets == name
        bands = []
        for band, low, high in BANDS:
            chosen = mine & (ages >= low) & (ages <= high)
            mae = f"{np.abs(predicted[chosen] - ages[chosen]).mean():5.2f}" if chosen.any() else "  n/a"
            bands.append(f"{band} {mae} (n={chosen.sum()})")
        adults = mine & (ages >= 25) & (ages <= 40)
        line = f"  {name:<11} n={mine.sum():<4} MAE by band: " + ", ".join(bands)
        if adults.any():
            error = predicted[adults] - ages[adults]
            line += (
                f"\n  {'':<11} adults 25-40: mean signed error {error.mean():+.2f} y, "
                f"expected age < 25: {100 * np.mean(predicted[adults] < 25):.1f} %, "
                f"< 28: {100 * np.mean(predicted[adults] < 28):.1f} % (n={adults.sum()})"
            )
        lines.append(line)
    return lines


def _gap(errors_a: np.ndarray, errors_b: np.ndarray) -> float:
    return float(errors_a.mean() - errors_b.mean())


def gap_lines(before: np.ndarray, after: np.ndarray, ages: np.ndarray, sets: np.ndarray) -> list[str]:
    """Bias (mean signed error, adults 25-40) faces-aaf minus faces-dev, with 95 % percentile bootstrap intervals
    over faces (each set resampled on its own; before and after on the same resamples)."""
    adults = (ages >= 25) & (ages <= 40)
    aaf, dev = np.nonzero(adults & (sets == "faces-aaf"))[0], np.nonzero(adults & (sets == "faces-dev"))[0]
    errors = {"before": before - ages, "after": after - ages}
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws = [(rng.choice(aaf, len(aaf)), rng.choice(dev, len(dev))) for _ in range(BOOTSTRAP)]
    lines = [f"bias gap, adults 25-40, faces-aaf (n={len(aaf)}) minus faces-dev (n={len(dev)}), 95 % bootstrap:"]
    samples = {}
    for label, error in errors.items():
        samples[label] = np.array([_gap(error[a], error[d]) for a, d in draws])
        low, high = np.quantile(samples[label], [0.025, 0.975])
        lines.append(f"  {label:<6} {_gap(error[aaf], error[dev]):+.2f} y  [{low:+.2f}, {high:+.2f}]")
    change = samples["after"] - samples["before"]
    point = _gap(errors["after"][aaf], errors["after"][dev]) - _gap(errors["before"][aaf], errors["before"][dev])
    low, high = np.quantile(change, [0.025, 0.975])
    lines.append(f"  change (after - before) {point:+.2f} y  [{low:+.2f}, {high:+.2f}] (paired resamples)")
    return lines


def teen_lines(before: np.ndarray, after: np.ndarray, ages: np.ndarray, sets: np.ndarray) -> list[str]:
    """MAE of ages 13-17, after minus before, per set and pooled, with 95 % paired bootstrap intervals over faces."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    teens = (ages >= 13) & (ages <= 17)
    lines = ["13-17 MAE change (fine-tuned minus original), 95 % paired bootstrap:"]
    for name in (*crops_data.SETS, "pooled"):
        chosen = np.nonzero(teens & ((sets == name) if name != "pooled" else True))[0]
        change = np.abs(after[chosen] - ages[chosen]) - np.abs(before[chosen] - ages[chosen])
        draws = np.array([change[rng.choice(len(change), len(change))].mean() for _ in range(BOOTSTRAP)])
        low, high = np.quantile(draws, [0.025, 0.975])
        lines.append(f"  {name:<11} {change.mean():+.2f} y  [{low:+.2f}, {high:+.2f}] (n={len(chosen)})")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crops", type=Path, required=True)
    parser.add_argument("--fine-tuned", type=Path, required=True)
    args = parser.parse_args(argv)
    from checks.faces import DESCRIPTION_NETWORK_PATH, face_engine

    data = crops_data.load(args.crops)
    _, _, test = crops_data.splits(data)
    crops, ages, sets = data.crops[test], data.ages[test].astype(np.float64), data.sets[test]
    before = expected_ages(DESCRIPTION_NETWORK_PATH, crops)
    _, engine_ages = face_engine().descriptions(list(crops[:8]))
    print(
        f"original vs checks.faces descriptions(), 8 faces: max |diff| {np.abs(engine_ages - before[:8]).max():.1e} y"
    )
    after = expected_ages(args.fine_tuned, crops)
    print(f"test fold (fold 5 of 5, by split_key, stratified by set): {len(test)} faces")
    for label, predicted in (("ORIGINAL", before), ("FINE-TUNED", after)):
        print("\n".join(set_lines(label, predicted, ages, sets)))
    print("\n".join(gap_lines(before, after, ages, sets)))
    print("\n".join(teen_lines(before, after, ages, sets)))


if __name__ == "__main__":
    main()
