"""Does the torch mirror (network.py) reproduce onnxruntime's `features` and expected `age` on real crops?

    PYTHONPATH=/work/research-cache/torch-site .venv/bin/python -m assurance.research.faceres_finetune.check \
        --crops /work/research-cache/faceres-crops.npz
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from . import data as crops_data
from .network import check


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crops", type=Path, required=True)
    parser.add_argument("--faces", type=int, default=64)
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    data = crops_data.load(args.crops)
    chosen = np.random.default_rng(0).choice(len(data), size=min(args.faces, len(data)), replace=False)
    features, ages = check(data.crops[np.sort(chosen)])
    print(f"{len(chosen)} real crops: max |torch - onnxruntime| features {features:.2e}, expected age {ages:.2e} y")


if __name__ == "__main__":
    main()
