"""The suite's two processes (scripts/test, tests/support/parallel.py) share nothing they would both empty."""

import os

import pytest
from django.conf import settings

from tests.faults.processes import FAULT_PORTS
from tests.support.parallel import port_range, worker_environment


def test_each_worker_gets_its_own_redis_database_fault_ports_and_gunicorn_port():
    given = ("redis://127.0.0.1:6379/15", "16400-16499", "16510")
    first, second = (worker_environment(worker, 2, *given) for worker in ("gw0", "gw1"))

    assert first == {
        "REDIS_URL": "redis://127.0.0.1:6379/15",
        "AV_TEST_FAULT_PORTS": "16400-16449",
        "AV_TEST_GUNICORN_PORT": "16510",
    }
    assert second == {
        "REDIS_URL": "redis://127.0.0.1:6379/14",
        "AV_TEST_FAULT_PORTS": "16450-16499",
        "AV_TEST_GUNICORN_PORT": "16511",
    }


def test_a_redis_database_too_low_for_the_workers_is_refused():
    with pytest.raises(pytest.UsageError, match="needs a database number of at least 2"):
        worker_environment("gw2", 3, "redis://127.0.0.1:6379/1", "16400-16499", "16510")
    with pytest.raises(pytest.UsageError, match="needs a database number"):
        worker_environment("gw0", 2, "redis://127.0.0.1:6379", "16400-16499", "16510")


def test_this_process_runs_with_its_workers_share(db):
    """Under scripts/test this runs in one of two workers: Django started after its share was set."""
    from django.db import connection

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        pytest.skip("one process (-n 0): nothing is shared")
    assert settings.REDIS_URL == os.environ["REDIS_URL"] and settings.CELERY_BROKER_URL == settings.REDIS_URL
    assert connection.settings_dict["NAME"].endswith(f"_{worker}")  # pytest-django's own share
    assert FAULT_PORTS == port_range(os.environ["AV_TEST_FAULT_PORTS"])
