"""The test command as a newcomer meets it (scripts/test, which ends in `pytest "$@"`): the container smoke test
stays out unless asked, and says so; the PostgreSQL and Redis it checks (and starts) are DATABASE_URL's and
REDIS_URL's."""

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import redis

from tests.containers.stack import free_port

REPO = Path(__file__).resolve().parents[1]
SMOKE = "tests/containers/test_smoke.py"


def collect(*args: str, containers: str | None = None) -> subprocess.CompletedProcess:
    """`pytest --collect-only` in one process, as scripts/test would run it with these arguments."""
    env = {name: value for name, value in os.environ.items() if name != "AV_TEST_CONTAINERS"}
    if containers is not None:
        env["AV_TEST_CONTAINERS"] = containers
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "--collect-only", "-q", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_container_smoke_test_is_left_out_unless_asked_and_pytest_says_so():
    result = collect(SMOKE, "tests/test_favicon.py")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_smoke.py" not in result.stdout
    assert "tests/test_favicon.py::test_favicon_ico_leads_to_the_services_icon" in result.stdout
    assert (
        "3 deselected: the container smoke test (podman as root, about 1.8 GB of images) runs only when asked: "
        "AV_TEST_CONTAINERS=1 (docs/testing.md)"
    ) in result.stdout.splitlines()


def test_asked_for_by_the_variable_or_by_a_mark_expression_it_is_collected():
    for result in (collect(SMOKE, containers="1"), collect(SMOKE, "-m", "containers")):
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"{SMOKE}::test_on_one_host_a_sandbox_session_completes_with_one_signed_webhook" in result.stdout
        assert "deselected" not in result.stdout and "left out" not in result.stdout


def test_a_callers_own_mark_expression_still_selects():
    result = collect(SMOKE, "tests/test_favicon.py", "-m", "not e2e and not faults", "-k", "favicon_ico")

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[0] == "tests/test_favicon.py::test_favicon_ico_leads_to_the_services_icon"


def run_test_command(*args: str, **env: str) -> subprocess.CompletedProcess:
    """scripts/test itself, with these variables; its pytest only collects, should it get that far."""
    return subprocess.run(
        ["bash", "scripts/test", "-n", "0", "--collect-only", "-q", "tests/test_favicon.py", *args],
        cwd=REPO,
        env={**os.environ, "AV_TEST_SERVICE_WAIT": "2", **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_database_elsewhere_that_does_not_answer_is_named_and_nothing_is_started():
    result = run_test_command(DATABASE_URL="postgres://ci:s3cret@db.invalid:5432/ageverify")

    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "scripts/test: no PostgreSQL answers at DATABASE_URL=postgres://ci:***@db.invalid:5432/ageverify (waited 2 s); "
        "start it, or set DATABASE_URL to one that runs (docs/testing.md)"
    )
    assert "starting" not in result.stdout and "s3cret" not in result.stdout + result.stderr


def test_a_redis_of_this_machine_on_another_port_is_started_there():
    port = free_port()
    try:
        result = run_test_command(
            REDIS_URL=f"redis://127.0.0.1:{port}/3", DATABASE_URL="postgres://postgres@db.invalid:5432/ageverify"
        )

        assert f"== starting Redis for REDIS_URL=redis://127.0.0.1:{port}/3" in result.stdout.splitlines()
        assert redis.Redis(port=port).ping()
        assert "no PostgreSQL answers at DATABASE_URL=postgres://postgres@db.invalid:5432/ageverify" in result.stderr
    finally:
        with contextlib.suppress(redis.ConnectionError):
            redis.Redis(port=port).shutdown(nosave=True)
