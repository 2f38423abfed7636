"""Runs tests/support/wallet_node/check_request.mjs: a wallet's libraries (npm, not ours) judge a request."""

import importlib.util
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).resolve().parent / "wallet_node" / "check_request.mjs"


def _installed() -> Path:
    # scripts/test installs them first; a targeted run installs them here (a second call does nothing).
    spec = importlib.util.spec_from_file_location(
        "install_wallet_libraries", ROOT / "scripts/install_wallet_libraries.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.install()


def wallet_check_request(digital: dict, *, origin: str, roots: list[bytes]) -> dict:
    """{protocol: [outcome per variant]}: each outcome {"verified": bool, "error"?: str, ...} as the wallet saw it."""
    completed = subprocess.run(
        ["node", "--input-type=module", "--eval", SCRIPT.read_text()],
        cwd=_installed(),
        input=json.dumps({"digital": digital, "origin": origin, "roots": [root.decode() for root in roots]}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"check_request.mjs failed: {completed.stderr[-2000:]}")
    return json.loads(completed.stdout)
