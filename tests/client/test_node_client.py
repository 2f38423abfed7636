"""The Node client (clients/node) against the running service: its own tests, run by Node's test runner.

The service is the Python client's gunicorn (conftest.py); the webhooks come from this process's Celery
worker, which trusts the receiver certificate the Node test serves; a real `webhook.test` event is recorded
here for the Node test to verify.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from webhooks.services import webhook_test_send

NODE_CLIENT = Path(__file__).resolve().parents[2] / "clients" / "node"
pytestmark = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None, reason="needs Node")


def _npm(*args: str) -> None:
    result = subprocess.run(["npm", *args], cwd=NODE_CLIENT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def built_node_client():
    """Installed from package-lock.json (npm's cache serves it after the first time) and compiled."""
    if not (NODE_CLIENT / "node_modules" / "typescript").is_dir():
        _npm("ci", "--no-audit", "--no-fund")
    _npm("run", "build")
    return NODE_CLIENT


def test_the_node_client_passes_its_tests_against_the_service(
    built_node_client, service, tenant, celery_worker, receiver, tls_files, tmp_path
):
    webhook_test_send(tenant=tenant.tenant, mode="test", url=receiver.url())
    [test_event] = receiver.wait_for(1, timeout=15)
    recorded = tmp_path / "test-event.json"
    recorded.write_text(json.dumps({"body": test_event.body.decode(), "headers": dict(test_event.headers)}))

    result = subprocess.run(
        ["node", "--test", "test/"],
        cwd=built_node_client,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": os.environ["PATH"],
            "AGEVERIFY_BASE_URL": service,
            "AGEVERIFY_TEST_KEY": tenant.test_key,
            "AGEVERIFY_WEBHOOK_SECRET": tenant.tenant.test_webhook_secret,
            "AGEVERIFY_TEST_EVENT": str(recorded),
            "TLS_CERT": str(tls_files.cert_chain),
            "TLS_KEY": str(tls_files.key),
        },
    )

    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "# fail 0" in result.stdout and "# pass 12" in result.stdout, result.stdout[-2000:]
