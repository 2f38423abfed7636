"""Flower, started with the README's command, asks for the basic auth credentials from settings."""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

REPO_ROOT = Path(__file__).resolve().parents[2]
FLOWER = [sys.executable, "-m", "celery", "-A", "ageverify", "flower", "--address=127.0.0.1"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(**overrides):
    inherited = {key: value for key, value in os.environ.items() if key != "FLOWER_BASIC_AUTH"}
    return {**inherited, **overrides}


@pytest.fixture
def flower_process():
    started = []

    def start(port, **env):
        process = subprocess.Popen(
            [*FLOWER, f"--port={port}"],
            cwd=REPO_ROOT,
            env=_env(**env),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _wait_for_http(url, process, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"flower exited: {process.stdout.read().decode(errors='replace')[-2000:]}")
        try:
            return requests.get(url, timeout=2)
        except requests.ConnectionError:
            time.sleep(0.2)
    raise AssertionError("flower did not answer in time")


def test_flower_asks_for_basic_auth_and_lets_the_configured_operator_in(flower_process):
    port = _free_port()
    process = flower_process(port, FLOWER_BASIC_AUTH="ops:flower-s3cret,oncall:other-s3cret")
    url = f"http://127.0.0.1:{port}/"

    anonymous = _wait_for_http(url, process)
    wrong = requests.get(url, auth=("ops", "guess"), timeout=5)
    operator = requests.get(url, auth=("ops", "flower-s3cret"), timeout=5)
    second = requests.get(url, auth=("oncall", "other-s3cret"), timeout=5)

    assert anonymous.status_code == 401 and "Basic" in anonymous.headers["WWW-Authenticate"]
    assert wrong.status_code == 401
    assert operator.status_code == 200 and "Flower" in operator.text
    assert second.status_code == 200


def test_flower_refuses_to_start_without_credentials(flower_process):
    process = flower_process(_free_port())

    output = process.communicate(timeout=30)[0].decode(errors="replace")

    assert process.returncode != 0
    assert "FLOWER_BASIC_AUTH is not set" in output
