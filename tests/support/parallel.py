"""Two test processes on one machine (pytest-xdist, `-n 2`): what each worker gets of its own (docs/testing.md).

pytest-django already gives each worker its own test database (`test_ageverify_gw0`, `test_ageverify_gw1`).
This plugin, loaded before Django starts (`-p tests.support.parallel` in pyproject.toml), gives each worker
its own Redis database (15, then 14, ...: every test empties its own), its own slice of the fault tests'
ports and its own gunicorn port, counted from the values the run was given. Without xdist it does nothing.
"""

import os

import pytest

# The defaults of the suite's own ports (docs/testing.md), read here and by the tests that bind them.
DEFAULT_FAULT_PORTS = "16400-16499"  # AV_TEST_FAULT_PORTS: the fault tests' private servers
DEFAULT_GUNICORN_PORT = "16510"  # AV_TEST_GUNICORN_PORT: the gunicorn the server tests start


def _setting(early_config: pytest.Config, name: str) -> str:
    """The variable as the caller set it, or else pyproject.toml's `env` default."""
    if name in os.environ:
        return os.environ[name]
    for entry in early_config.getini("env"):
        key, _, value = entry.removeprefix("D:").partition("=")
        if key == name:
            return value
    raise KeyError(name)


def port_range(text: str) -> range:
    """A FIRST-LAST range of ports, as AV_TEST_FAULT_PORTS gives it."""
    first, _, last = text.partition("-")
    try:
        return range(int(first), int(last) + 1)
    except ValueError:
        raise pytest.UsageError(f"AV_TEST_FAULT_PORTS must be FIRST-LAST (e.g. 16400-16499), not {text!r}") from None


def worker_environment(worker: str, count: int, redis_url: str, fault_ports: str, gunicorn_port: str) -> dict:
    """The variables worker `gw<n>` of `count` runs with."""
    number = int(worker.removeprefix("gw"))
    base, _, database = redis_url.rpartition("/")
    if not database.isdigit() or int(database) - number < 0:
        raise pytest.UsageError(f"REDIS_URL {redis_url}: needs a database number of at least {count - 1}")
    ports = port_range(fault_ports)
    width = len(ports) // count
    start = ports.start + number * width
    return {
        "REDIS_URL": f"{base}/{int(database) - number}",
        "AV_TEST_FAULT_PORTS": f"{start}-{start + width - 1}",
        "AV_TEST_GUNICORN_PORT": str(int(gunicorn_port) + number),
    }


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser, args) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return
    os.environ.update(
        worker_environment(
            worker,
            int(os.environ["PYTEST_XDIST_WORKER_COUNT"]),
            _setting(early_config, "REDIS_URL"),
            os.environ.get("AV_TEST_FAULT_PORTS", DEFAULT_FAULT_PORTS),
            os.environ.get("AV_TEST_GUNICORN_PORT", DEFAULT_GUNICORN_PORT),
        )
    )
