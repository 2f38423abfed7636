"""The in-process Celery worker the tests use: once stopped, it holds nothing of the test process."""

from django.db import connection

from ageverify.celery import app
from sessions_api.tasks import sessions_expire_due
from tests.support.waiting import wait_until
from tests.support.workers import in_process_worker, tasks_settled


def _other_connections() -> int:
    """Connections to this test database other than the test's own (a worker's threads, say)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_a_stopped_thread_pool_worker_leaves_no_database_connection_open(transactional_db):
    # Left open, they outlive the test and keep pytest-django from dropping the test database at the end.
    app.control.purge()
    before = _other_connections()
    with in_process_worker(pool="threads", concurrency=4):
        for _ in range(12):
            sessions_expire_due.delay()
        wait_until(tasks_settled)
        assert _other_connections() > before  # its threads did read the database

    assert _other_connections() <= before
