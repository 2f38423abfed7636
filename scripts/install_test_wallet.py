"""Installs the tests' phone wallet (tests/support/wallet/): OpenID4VP and mdoc libraries from the npm registry.

`npm install` with the committed package-lock.json installs exactly what it locks, each tarball checked
against the lock's sha512 integrity (a different tarball stops the install), with no install scripts
run, into the gitignored `.test-wallet/`; a lock npm had to change stops it too. (Not `npm ci`: npm 11
refuses this lock for the other platforms' optional cbor-extract builds it never records.)
Run by scripts/test (setup-env.sh `ensure_test_wallet`); a second run with the same lock does nothing.
"""

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "support" / "wallet"
WALLET_DIR = ROOT / ".test-wallet"  # owned by this script, gitignored
FILES = ("package.json", "package-lock.json", "wallet.mjs")
STAMP = WALLET_DIR / ".installed"


def _fingerprint() -> str:
    return hashlib.sha256(b"".join((SOURCE / name).read_bytes() for name in FILES[:2])).hexdigest()


def install() -> Path:
    script = WALLET_DIR / "wallet.mjs"
    if STAMP.exists() and STAMP.read_text() == _fingerprint():
        shutil.copyfile(SOURCE / "wallet.mjs", script)  # the script may change without the lock
        return script
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("install_test_wallet: npm is not installed")
    WALLET_DIR.mkdir(exist_ok=True)
    for name in FILES:
        shutil.copyfile(SOURCE / name, WALLET_DIR / name)
    completed = subprocess.run(
        [npm, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--cache", str(WALLET_DIR / "npm-cache")],
        cwd=WALLET_DIR,
        capture_output=True,
        text=True,
    )
    if completed.returncode != 0:
        sys.exit(f"install_test_wallet: npm install failed: {completed.stderr.strip()[-2000:]}")
    if (WALLET_DIR / "package-lock.json").read_bytes() != (SOURCE / "package-lock.json").read_bytes():
        sys.exit("install_test_wallet: npm changed the lock: tests/support/wallet/package-lock.json is stale")
    STAMP.write_text(_fingerprint())
    return script


if __name__ == "__main__":
    print(f"test wallet: {install().relative_to(ROOT)}", file=sys.stderr)
