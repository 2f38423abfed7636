"""Cross-check of the converted age network: face-api's own JS implementation against our ONNX.

Run by hand from the repository root (the first run installs the pinned npm packages, ~330 MB):
    .venv/bin/python bench/age_network_crosscheck.py [--faces N]
Installs bench/age_network_js/package.json with its package-lock.json (`npm ci`: exact versions,
registry integrity checked) into .age-network/crosscheck/, then runs the same 112x112 inputs
through face-api's AgeGenderNet on tfjs's pure-JS CPU backend (node) and through
.age-network/age_gender_net.onnx with onnxruntime, and prints the largest differences. The inputs
are N labelled faces from faces-dev, cropped by the service (checks.faces.age_network_input), and
two random images. Exits 1 when an age differs by more than TOLERANCE years.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[0] = str(ROOT)

JS_SOURCE = ROOT / "bench" / "age_network_js"
INSTALL_DIR = ROOT / ".age-network" / "crosscheck"
TOLERANCE = 1e-4  # years; float32 sums in a different order differ by about 1e-5 years here


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--faces", type=int, default=40)
    count = parser.parse_args().faces

    install()
    faces = sample_faces(count)
    random = np.random.default_rng(0).uniform(0, 255, size=(2, 112, 112, 3))
    batch = np.concatenate([faces.astype(np.float32), random.astype(np.float32)])

    import onnxruntime

    from checks.faces import AGE_NETWORK_PATH

    session = onnxruntime.InferenceSession(str(AGE_NETWORK_PATH), providers=["CPUExecutionProvider"])
    onnx_age, onnx_gender = session.run(["age", "gender"], {"face": batch})
    with tempfile.TemporaryDirectory() as work:
        inputs, output = Path(work) / "faces.f32", Path(work) / "out.json"
        batch.astype("<f4").tofile(inputs)
        subprocess.run(
            ["node", str(JS_SOURCE / "check.js"), str(inputs), str(len(batch)), str(output)],
            check=True,
            env={"NODE_PATH": str(INSTALL_DIR / "node_modules"), "PATH": "/usr/bin:/bin"},
            stdout=subprocess.DEVNULL,
        )
        js = json.loads(output.read_text())
    js_age = np.array(js["age"], dtype=np.float64)
    js_gender = np.array(js["gender"], dtype=np.float64).reshape(-1, 2)
    age_difference = np.abs(js_age - onnx_age)
    print(f"face-api {js['faceapi']} on tfjs {js['tfjs']} ({js['backend']} backend) vs onnxruntime")
    print(f"inputs: {len(faces)} faces from faces-dev + 2 random images")
    print(f"ages (years): JS {np.round(js_age[:6], 3).tolist()} ...")
    print(f"ages (years): ONNX {np.round(onnx_age[:6].astype(float), 3).tolist()} ...")
    print(
        f"SUMMARY max |age difference| {age_difference.max():.2e} years, "
        f"max |gender probability difference| {np.abs(js_gender - onnx_gender).max():.2e}, "
        f"tolerance {TOLERANCE:g} years: {'OK' if age_difference.max() <= TOLERANCE else 'FAILED'}"
    )
    return 0 if age_difference.max() <= TOLERANCE else 1


def install() -> None:
    INSTALL_DIR.mkdir(parents=True, exist_ok=True)
    stamp = INSTALL_DIR / "node_modules" / ".installed-lock"
    lock = (JS_SOURCE / "package-lock.json").read_bytes()
    if stamp.exists() and stamp.read_bytes() == lock:
        return
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(JS_SOURCE / name, INSTALL_DIR / name)
    subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--silent"], cwd=INSTALL_DIR, check=True
    )
    stamp.write_bytes(lock)


def sample_faces(count: int) -> np.ndarray:
    from checks.faces import dominant_face, face_engine
    from checks.images import open_image

    directory = ROOT.parent / "shared" / "data" / "faces-dev"
    if not directory.is_dir():
        directory = Path("/work/shared/data/faces-dev")
    files = sorted(directory.glob("*.jpg"))
    crops = []
    for path in files[:: max(1, len(files) // (2 * count))]:
        face, rival = dominant_face(face_engine().faces(open_image(path.read_bytes())))
        if face is not None and not rival:
            crops.append(face.age_input)
        if len(crops) == count:
            break
    return np.stack(crops)


if __name__ == "__main__":
    sys.exit(main())
