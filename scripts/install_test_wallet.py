"""Installs the tests' wallet side (tests/support/wallet/): OpenID4VP and mdoc libraries from the npm registry.

One folder, one lock for both scripts there: `wallet.mjs` (the cross-device phone wallet) and
`check_request.mjs` (a wallet's libraries judging the service's signed requests and readerAuth).
`npm install` with the committed package-lock.json installs exactly what it locks, each tarball checked
against the lock's sha512 integrity (a different tarball stops the install), with no install scripts
run, into the gitignored `.test-wallet/`. A lock that does not pin what package.json asks for stops it
before npm runs, and a lock npm had to change stops it after. (Not `npm ci`: npm 11 refuses this lock
for cbor-extract's optional platform builds, which the registry does not have at the locked version.)
Run by scripts/test (setup-env.sh `ensure_test_wallet`); a second run with the same lock does nothing.
"""

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "support" / "wallet"
WALLET_DIR = ROOT / ".test-wallet"  # owned by this script, gitignored
LOCKED = ("package.json", "package-lock.json")
STAMP = WALLET_DIR / ".installed"


def _fingerprint() -> str:
    return hashlib.sha256(b"".join((SOURCE / name).read_bytes() for name in LOCKED)).hexdigest()


def _copy_scripts() -> None:
    # The scripts may change without the lock; node resolves their imports from the folder they are in.
    for script in SOURCE.glob("*.mjs"):
        shutil.copyfile(script, WALLET_DIR / script.name)


def _stale_lock() -> str | None:
    """Why the committed lock does not pin exactly what package.json asks for, or None."""
    wanted = json.loads((SOURCE / "package.json").read_text()).get("dependencies", {})
    packages = json.loads((SOURCE / "package-lock.json").read_text()).get("packages", {})
    recorded = packages.get("", {}).get("dependencies", {})
    for name in sorted(wanted.keys() | recorded.keys()):
        locked = packages.get(f"node_modules/{name}", {}).get("version")
        if not (wanted.get(name) == recorded.get(name) == locked):
            return f"package.json asks for {name} {wanted.get(name, 'not at all')}, the lock has {locked or 'none'}"
    unchecked = [path for path, package in packages.items() if path and not package.get("integrity")]
    if unchecked:
        return f"no integrity for {', '.join(unchecked)}"
    return None


def install() -> Path:
    if STAMP.exists() and STAMP.read_text() == _fingerprint():
        _copy_scripts()
        return WALLET_DIR
    stale = _stale_lock()
    if stale:
        sys.exit(
            f"install_test_wallet: tests/support/wallet/package-lock.json is stale ({stale}): "
            "regenerate it with `npm install --package-lock-only --ignore-scripts` in tests/support/wallet"
        )
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("install_test_wallet: npm is not installed")
    WALLET_DIR.mkdir(exist_ok=True)
    STAMP.unlink(missing_ok=True)
    for name in LOCKED:
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
    _copy_scripts()
    STAMP.write_text(_fingerprint())
    return WALLET_DIR


if __name__ == "__main__":
    print(f"test wallet: {install().relative_to(ROOT)}", file=sys.stderr)
