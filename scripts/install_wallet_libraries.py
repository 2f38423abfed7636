"""Installs the wallet-side npm libraries the tests use to check the service's signed wallet requests.

tests/support/wallet_node/package-lock.json pins every package with its registry integrity; `npm ci`
installs exactly that tree (refusing a tarball whose integrity differs) into .wallet-libraries/
(gitignored), without running any package's install scripts. Run by scripts/test (setup-env.sh
`ensure_wallet_libraries`); a second run with the same lock file does nothing.
"""

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "support" / "wallet_node"
TARGET = ROOT / ".wallet-libraries"  # owned by this script, gitignored
FILES = ("package.json", "package-lock.json")


def _stamp() -> str:
    return hashlib.sha256(b"".join((SOURCE / name).read_bytes() for name in FILES)).hexdigest()


def install() -> Path:
    stamp_file = TARGET / "installed.sha256"
    if stamp_file.exists() and stamp_file.read_text() == _stamp() and (TARGET / "node_modules").is_dir():
        return TARGET
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("install_wallet_libraries: npm is not installed")
    TARGET.mkdir(exist_ok=True)
    for name in FILES:
        shutil.copyfile(SOURCE / name, TARGET / name)
    completed = subprocess.run(
        [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--silent", "--cache", str(TARGET / "npm-cache")],
        cwd=TARGET,
        capture_output=True,
        text=True,
    )
    if completed.returncode != 0:
        sys.exit(f"install_wallet_libraries: npm ci failed: {completed.stderr.strip()}")
    stamp_file.write_text(_stamp())
    return TARGET


if __name__ == "__main__":
    print(f"wallet libraries: {install().relative_to(ROOT)}", file=sys.stderr)
