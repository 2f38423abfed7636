"""The in-process Celery worker the tests use: once stopped, it holds nothing of the test process."""

from django.db import connection

from ageverify.celery import app
from sessions_api.tasks import sessions_expire_due
from tests.support.waiting import wait_until
from tests.support.workers import in_process_worker, tasks_settled


def _other_connections() -> set[int]:
    """The server processes of connections to this test database other than the test's own."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return {pid for (pid,) in cursor.fetchall()}


def test_a_stopped_thread_pool_worker_leaves_no_database_connection_open(transactional_db):
    # Left open, they outlive the test and keep pytest-django from dropping the test database at the end.
    app.control.purge()
    before = _other_connections()  # what earlier tests left may be closing meanwhile
    with in_process_worker(pool="threads", concurrency=4):
        for _ in range(12):
            sessions_expire_due.delay()
        wait_until(tasks_settled)
        assert _other_connections() - before  # its threads did read the database

    # A closed connection's server process ends a moment after its client has gone.
    wait_until(lambda: not _other_connections() - before, timeout=10, describe=lambda: str(_other_connections()))
