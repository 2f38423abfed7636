"""The two age readers the policy combines: a corrected estimate and an independent second opinion.

Both are small networks (one hidden layer, an average of several seeds) trained by
`manage.py calibrate_age_policy` on the calibration half of the labelled research faces (faces-dev,
faces-aaf, faces-pairs), and read here with numpy alone. What each reads is recorded in the weights
file (READABLE names the choices):

* the **estimate** reads face-api's own age and its 512 pooled features, dlib's 128-number face
  descriptor and HSE FaceRes's expected age (a second age network, checks.faces). Trained on all three
  sets, it corrects face-api's bias by group (face-api reads East Asian adults about five years too
  young) from the face itself, never from a label of the user's group;
* the **second opinion** reads dlib's descriptor only: another backbone (a ResNet trained for identity
  on other data), so its gross errors (a laughing child read as an adult) rarely coincide with the
  estimate's. It can only veto: a face approves when both read it well above the limit
  (sessions_api.age_policy).

The weights file is written by that command and committed (or, for an operator's own refit, written where
the AGE_READERS_FILE setting points). The policy records its sha256, and the service puts a policy and its
readers in force together (heads_use, called by sessions_api.age_policy): readers whose bytes are
not the ones the policy was calibrated for are refused, and the service does not start.
"""

from __future__ import annotations

import hashlib
import io
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HEADS_PATH = Path(__file__).resolve().parent / "models" / "age_heads.npz"
# The oldest age a reader reports. Its networks extrapolate in log(1 + age): a face far from every calibration
# face (a broken or crafted picture) would otherwise read as an infinite age, which passes every limit.
AGE_CEILING = 120.0


@dataclass(frozen=True)
class Head:
    """One reader: standardise, then a one-hidden-layer ReLU network per seed, averaged, in log(1 + age),
    within 0 and AGE_CEILING years."""

    mean: np.ndarray
    scale: np.ndarray
    layers: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]  # (W1, b1, W2, b2) per seed

    def ages(self, inputs: np.ndarray) -> np.ndarray:
        z = (np.asarray(inputs, dtype=np.float64) - self.mean) / self.scale
        outputs = [np.maximum(z @ w1 + b1, 0.0) @ w2 + b2 for w1, b1, w2, b2 in self.layers]
        logs = np.minimum(np.mean(outputs, axis=0).reshape(len(z)), np.log1p(AGE_CEILING))
        return np.clip(np.expm1(logs), 0.0, AGE_CEILING)

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        saved = {f"{prefix}/mean": self.mean, f"{prefix}/scale": self.scale}
        for seed, (w1, b1, w2, b2) in enumerate(self.layers):
            saved.update({f"{prefix}/{seed}/w1": w1, f"{prefix}/{seed}/b1": b1, f"{prefix}/{seed}/w2": w2,
                          f"{prefix}/{seed}/b2": b2})  # fmt: skip
        return saved

    @classmethod
    def from_arrays(cls, saved, prefix: str) -> Head:
        seeds = sorted(
            {
                int(key.split("/")[1])
                for key in saved
                if key.startswith(prefix + "/") and key.count("/") == 2 and key.split("/")[1].isdigit()
            }
        )
        layers = [tuple(saved[f"{prefix}/{seed}/{name}"] for name in ("w1", "b1", "w2", "b2")) for seed in seeds]
        return cls(mean=saved[f"{prefix}/mean"], scale=saved[f"{prefix}/scale"], layers=layers)


# What a reader can read of a face, in the order its inputs are stacked: one number or a vector each.
READABLE = {
    "network_age": "face-api's age (years)",
    "network_features": "face-api's 512 pooled features",
    "descriptor": "dlib's 128-number face descriptor",
    "description_age": "HSE FaceRes's expected age (years)",
    "description_features": "HSE FaceRes's 1,024 pooled features",
    "chip_age": "Cydral's dlib-models age network's expected age (years)",
}


@dataclass(frozen=True)
class AgeHeads:
    estimate: Head
    second_opinion: Head
    estimate_reads: tuple[str, ...]  # names from READABLE
    second_opinion_reads: tuple[str, ...]
    sha256: str = ""  # of the file they were read from ("" for readers just trained)

    def read(self, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(estimate, second opinion) in years for each face, from what READABLE names, one row per face."""
        return self.estimate.ages(stacked(inputs, self.estimate_reads)), self.second_opinion.ages(
            stacked(inputs, self.second_opinion_reads)
        )

    def save(self, path: Path) -> str:
        """Write the weights; returns the file's sha256."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp.npz")
        reads = {"estimate/reads": self.estimate_reads, "second_opinion/reads": self.second_opinion_reads}
        np.savez(
            temporary,
            **self.estimate.arrays("estimate"),
            **self.second_opinion.arrays("second_opinion"),
            **{key: np.array(names) for key, names in reads.items()},
        )
        temporary.replace(path)
        return hashlib.sha256(path.read_bytes()).hexdigest()


def stacked(inputs: dict[str, np.ndarray], names: tuple[str, ...]) -> np.ndarray:
    """The named inputs side by side, one row per face (a number per face becomes a column)."""
    unknown = set(names) - set(READABLE)
    if unknown:
        raise ValueError(f"a reader cannot read {sorted(unknown)}")
    columns = [np.asarray(inputs[name], dtype=np.float64) for name in names]
    return np.hstack([c.reshape(len(c), -1) for c in columns])


class ReadersMismatch(RuntimeError):
    """The readers file is not the one a policy was calibrated for (or is missing)."""


def heads_digest(path: Path = HEADS_PATH) -> str:
    """The readers file's sha256 ("missing" when there is none)."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"


def heads_load(path: Path = HEADS_PATH, *, sha256: str | None = None) -> AgeHeads:
    """The readers in `path`; with `sha256`, only if the bytes read are those (else ReadersMismatch)."""
    path = Path(path)
    if not path.is_file():
        raise ReadersMismatch(f"the age readers {path} are missing")
    data = path.read_bytes()  # hashed and parsed from the same bytes: what is checked is what is loaded
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and digest != sha256:
        raise ReadersMismatch(f"the age readers {path} have sha256 {digest}, not {sha256}")
    with np.load(io.BytesIO(data)) as saved:
        arrays = {key: saved[key] for key in saved.files}
    return AgeHeads(
        Head.from_arrays(arrays, "estimate"),
        Head.from_arrays(arrays, "second_opinion"),
        tuple(str(name) for name in arrays["estimate/reads"]),
        tuple(str(name) for name in arrays["second_opinion/reads"]),
        sha256=digest,
    )


_heads: AgeHeads | None = None
_heads_path: Path | None = None
_heads_lock = threading.Lock()


def age_heads() -> AgeHeads:
    """The readers in use: those the service installed with its policy (heads_use), else the committed ones."""
    global _heads
    if _heads is None:
        with _heads_lock:
            if _heads is None:
                _heads = heads_load()
    return _heads


def heads_use(path: Path, *, sha256: str) -> AgeHeads:
    """Read the readers in `path`, checked against `sha256`, and use them from now on (the policy's loader calls
    this: a policy and its readers are put in force together)."""
    global _heads, _heads_path
    heads = heads_load(path, sha256=sha256)
    with _heads_lock:
        _heads, _heads_path = heads, Path(path).resolve()
    return heads


def heads_in_use_digest() -> str:
    """The sha256 of the readers in use."""
    return age_heads().sha256


def heads_in_use_path() -> Path:
    """Where the readers in use were read from."""
    return _heads_path or HEADS_PATH


def heads_shown_name(path: Path) -> str:
    """A readers file as the estimator's name shows it (checks.age.age_network): the committed one by its place
    in the repository."""
    path = Path(path).resolve()
    return "checks/models/age_heads.npz" if path == HEADS_PATH else str(path)
