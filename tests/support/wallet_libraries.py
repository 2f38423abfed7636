"""Runs tests/support/wallet/check_request.mjs: a wallet's libraries (npm, not ours) judge a request."""

import importlib.util
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def installed_test_wallet() -> Path:
    """.test-wallet/, with tests/support/wallet's libraries and scripts: scripts/test installs it first; a
    targeted run installs it here (scripts/install_test_wallet.py; a second call only copies the scripts)."""
    spec = importlib.util.spec_from_file_location("install_test_wallet", ROOT / "scripts/install_test_wallet.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.install()


def wallet_check_request(digital: dict, *, origin: str, roots: list[bytes]) -> dict:
    """{protocol: [outcome per variant]}: each outcome {"verified": bool, "error"?: str, ...} as the wallet saw it."""
    wallet_dir = installed_test_wallet()
    completed = subprocess.run(
        ["node", str(wallet_dir / "check_request.mjs")],
        cwd=wallet_dir,
        input=json.dumps({"digital": digital, "origin": origin, "roots": [root.decode() for root in roots]}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"check_request.mjs failed: {completed.stderr[-2000:]}")
    return json.loads(completed.stdout)
