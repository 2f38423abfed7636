"""The tests' wallet install (scripts/install_test_wallet.py), run as a command in a copy of the repository's
layout: the committed lock pins what package.json asks with an integrity for every package, npm installs it
from an empty folder unchanged and a second run does nothing; a stale lock, a lock npm rewrites, a failing
npm and no npm at all stop it with a message saying which, and leave no install behind."""

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
WALLET = REPO / "tests" / "support" / "wallet"


def _layout(tmp_path: Path) -> Path:
    """A repository root holding only the installer and tests/support/wallet, as committed."""
    (tmp_path / "scripts").mkdir()
    shutil.copyfile(REPO / "scripts" / "install_test_wallet.py", tmp_path / "scripts" / "install_test_wallet.py")
    shutil.copytree(WALLET, tmp_path / "tests" / "support" / "wallet")
    return tmp_path


def _fake_npm(tmp_path: Path, body: str) -> str:
    """A PATH whose only npm is this shell script (it records each call in npm-calls)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "npm-calls"}\n{body}\n')
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)
    return str(bin_dir)


def _install(root: Path, path: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(root / "scripts" / "install_test_wallet.py")],
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_lock_pins_what_package_json_asks_with_an_integrity_for_every_package():
    wanted = json.loads((WALLET / "package.json").read_text())["dependencies"]
    packages = json.loads((WALLET / "package-lock.json").read_text())["packages"]

    assert packages[""]["dependencies"] == wanted
    for name, version in wanted.items():
        assert version[0].isdigit(), f"{name} is not pinned: {version}"
        assert packages[f"node_modules/{name}"]["version"] == version
    assert [
        path for path, package in packages.items() if path and not package.get("integrity", "").startswith("sha512-")
    ] == []


@pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None, reason="needs npm and node")
def test_from_an_empty_folder_npm_installs_the_lock_unchanged_and_a_second_run_does_nothing(tmp_path):
    root = _layout(tmp_path)

    first = _install(root, os.environ["PATH"])

    assert first.returncode == 0, first.stderr
    installed = root / ".test-wallet"
    assert (installed / "package-lock.json").read_bytes() == (WALLET / "package-lock.json").read_bytes()
    names = json.loads((WALLET / "package.json").read_text())["dependencies"]
    imported = subprocess.run(
        ["node", "--input-type=module", "--eval", f"for (const name of {json.dumps(list(names))}) await import(name);"],
        cwd=installed,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert imported.returncode == 0, imported.stderr
    assert {"wallet.mjs", "check_request.mjs"} <= {path.name for path in installed.glob("*.mjs")}

    # Again, with an npm that only records being called, after a script changed: npm is not run, the script is copied.
    (root / "tests" / "support" / "wallet" / "wallet.mjs").write_text("// changed\n")
    second = _install(root, _fake_npm(tmp_path, "exit 1"))

    assert second.returncode == 0, second.stderr
    assert not (tmp_path / "npm-calls").exists()
    assert (installed / "wallet.mjs").read_text() == "// changed\n"


def test_a_lock_that_does_not_pin_what_package_json_asks_stops_it_before_npm_runs(tmp_path):
    root = _layout(tmp_path)
    package_json = root / "tests" / "support" / "wallet" / "package.json"
    package = json.loads(package_json.read_text())
    package["dependencies"]["jose"] = "6.2.17"
    package_json.write_text(json.dumps(package))

    result = _install(root, _fake_npm(tmp_path, "exit 0"))

    assert result.returncode == 1
    assert "install_test_wallet: tests/support/wallet/package-lock.json is stale" in result.stderr
    assert "jose" in result.stderr and "npm install --package-lock-only" in result.stderr
    assert not (tmp_path / "npm-calls").exists()
    assert not (root / ".test-wallet").exists()


def test_a_lock_npm_had_to_change_stops_it_and_nothing_counts_as_installed(tmp_path):
    root = _layout(tmp_path)

    result = _install(root, _fake_npm(tmp_path, "echo ' ' >> package-lock.json"))

    assert result.returncode == 1
    assert result.stderr.strip() == (
        "install_test_wallet: npm changed the lock: tests/support/wallet/package-lock.json is stale"
    )
    assert "--ignore-scripts" in (tmp_path / "npm-calls").read_text().split()
    assert not (root / ".test-wallet" / ".installed").exists()


def test_a_failing_npm_is_quoted_and_nothing_counts_as_installed(tmp_path):
    root = _layout(tmp_path)

    result = _install(root, _fake_npm(tmp_path, "echo 'npm error code EINTEGRITY' >&2; exit 1"))

    assert result.returncode == 1
    assert result.stderr.strip() == "install_test_wallet: npm install failed: npm error code EINTEGRITY"
    assert not (root / ".test-wallet" / ".installed").exists()


def test_without_npm_it_says_so(tmp_path):
    root = _layout(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()

    result = _install(root, str(empty))

    assert result.returncode == 1
    assert result.stderr.strip() == "install_test_wallet: npm is not installed"
    assert not (root / ".test-wallet").exists()
