"""The crop cache (extract.py) and its folds: five by split_key, stratified by set; an inner split of folds 1-4.

Fold numbers here are 0-4: folds 0-3 are the brief's "folds 1-4" (training), fold 4 its "fold 5" (the
test fold, read only by evaluate.py). The inner validation split picks the epoch count inside folds 0-3.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

FOLDS = 5
TEST_FOLD = 4
FOLD_SEED = 20261127
INNER_SEED = 20261128
INNER_SHARE = 5  # one split_key in five of folds 0-3 is the inner validation split
SETS = ("faces-dev", "faces-aaf", "faces-pairs")


@dataclass(frozen=True)
class Crops:
    crops: np.ndarray  # (n, 224, 224, 3) uint8
    ages: np.ndarray  # (n,) int
    sets: np.ndarray  # (n,) str
    names: np.ndarray
    split_keys: np.ndarray

    def __len__(self) -> int:
        return len(self.ages)


def load(path: Path) -> Crops:
    with np.load(path, allow_pickle=False) as saved:
        return Crops(**{name: saved[name] for name in ("crops", "ages", "sets", "names", "split_keys")})


def _keyed_groups(sets: np.ndarray, keys: np.ndarray, seed: int, groups: int) -> np.ndarray:
    """A group 0..groups-1 for each face: each set's split keys shuffled and dealt round, so one person stays in one."""
    rng = np.random.default_rng(seed)
    group = np.full(len(keys), -1)
    for name in sorted(set(sets.tolist())):
        unique = np.array(sorted(set(keys[sets == name].tolist())))
        dealt = dict(zip(unique[rng.permutation(len(unique))], np.arange(len(unique)) % groups))
        chosen = np.nonzero(sets == name)[0]
        group[chosen] = [dealt[k] for k in keys[chosen]]
    return group


def folds(data: Crops) -> np.ndarray:
    return _keyed_groups(data.sets, data.split_keys, FOLD_SEED, FOLDS)


def splits(data: Crops) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of (inner training, inner validation, test fold)."""
    fold = folds(data)
    training = np.nonzero(fold != TEST_FOLD)[0]
    inner = _keyed_groups(data.sets[training], data.split_keys[training], INNER_SEED, INNER_SHARE)
    return training[inner != 0], training[inner == 0], np.nonzero(fold == TEST_FOLD)[0]
