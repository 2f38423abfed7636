"""Installs axe-core, the accessibility engine the browser tests run on every flow page, from the npm registry.

The pinned version's tarball is fetched with `npm pack` and checked against the registry's integrity
(`npm view axe-core@4.14.1 dist.integrity`) before `axe.min.js` is taken from it: a different tarball
stops the install. Run by scripts/test (setup-env.sh `ensure_axe_core`); a second run does nothing.
"""

import base64
import hashlib
import io
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AXE_DIR = ROOT / ".axe-core"  # owned by this script, gitignored
PACKAGE = "axe-core"
VERSION = "4.14.1"
TARBALL_INTEGRITY = "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
SCRIPT_PATH = AXE_DIR / f"axe-{VERSION}.min.js"


def install() -> Path:
    if SCRIPT_PATH.exists():
        return SCRIPT_PATH
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("install_axe_core: npm is not installed")
    with tempfile.TemporaryDirectory() as work:
        completed = subprocess.run(
            [
                npm,
                "pack",
                f"{PACKAGE}@{VERSION}",
                "--silent",
                "--cache",
                str(AXE_DIR / "npm-cache"),
                "--pack-destination",
                work,
            ],
            capture_output=True,
            text=True,
        )
        tarballs = list(Path(work).glob("*.tgz"))
        if completed.returncode != 0 or len(tarballs) != 1:
            sys.exit(f"install_axe_core: npm pack {PACKAGE}@{VERSION} failed: {completed.stderr.strip()}")
        tarball = tarballs[0].read_bytes()
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    if integrity != TARBALL_INTEGRITY:
        sys.exit(f"install_axe_core: the tarball's integrity is {integrity}, expected {TARBALL_INTEGRITY}")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        script = archive.extractfile("package/axe.min.js").read()
    AXE_DIR.mkdir(exist_ok=True)
    SCRIPT_PATH.write_bytes(script)
    return SCRIPT_PATH


if __name__ == "__main__":
    print(f"axe-core {VERSION}: {install().relative_to(ROOT)}", file=sys.stderr)
