"""`scripts/demo` runs on embedded defaults (SQLite, filesystem broker): the walk-through's API calls work there too.

The rest of the suite runs on PostgreSQL; this test starts the service the way `scripts/demo` does, with
no DATABASE_URL and no REDIS_URL, and reads a session back as a partner following the README would.
"""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def embedded_demo(tmp_path_factory):
    var_dir = tmp_path_factory.mktemp("demo-var")
    port = _free_port()
    env = {key: value for key, value in os.environ.items() if key not in ("DATABASE_URL", "REDIS_URL")}
    env.update(
        DEBUG="1", AGEVERIFY_VAR_DIR=str(var_dir), PUBLIC_BASE_URL=f"http://localhost:{port}", PYTHONUNBUFFERED="1"
    )
    (var_dir / "broker").mkdir()
    (var_dir / "broker-control").mkdir()
    manage = [sys.executable, str(REPO / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], env=env, cwd=REPO, check=True, timeout=300)
    seeded = subprocess.run(
        [*manage, "demo_seed", "--json"], env=env, cwd=REPO, check=True, timeout=120, capture_output=True, text=True
    )
    keys = json.loads(seeded.stdout)
    server = subprocess.Popen(
        [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(f"{base}/", timeout=2)
            break
        except requests.ConnectionError:
            if time.monotonic() > deadline or server.poll() is not None:
                server.kill()
                raise AssertionError(f"the demo server did not start: {server.stdout.read()}")
            time.sleep(0.2)
    yield base, keys
    server.terminate()
    server.wait(timeout=20)


def test_a_sandbox_session_is_created_read_and_approved_on_the_embedded_defaults(embedded_demo):
    base, keys = embedded_demo
    headers = {"X-API-Key": keys["test_api_key"]}
    created = requests.post(
        f"{base}/v1/sessions", headers=headers, json={"subject": "user-42", "age_limit": 18}, timeout=30
    )
    assert created.status_code == 201, created.text
    session_id = created.json()["session"]["sessionId"]

    read = requests.get(f"{base}/v1/sessions/{session_id}", headers=headers, timeout=30)
    assert read.status_code == 200, read.text
    session = read.json()["session"]
    assert session["status"] == "initiated"
    assert session["expiresAt"].endswith("Z") and session["createdAt"].endswith("Z")

    advanced = requests.post(
        f"{base}/v1/test/sessions/{session_id}/advance", headers=headers, json={"to": "approved"}, timeout=30
    )
    assert advanced.status_code == 200, advanced.text
    final = requests.get(f"{base}/v1/sessions/{session_id}", headers=headers, timeout=30)
    assert final.status_code == 200, final.text
    body = final.json()
    assert body["session"]["status"] == "approved"
    results = [body[key] for key in ("ageEstimation", "liveness", "validateDoc", "ageCredential")]
    assert any(result is not None for result in results), body
    if body["liveness"] is not None:
        assert body["liveness"]["isLive"] is True
    if body["validateDoc"] is not None:
        assert isinstance(body["validateDoc"]["livenessChecked"], bool)
