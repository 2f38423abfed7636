"""A real Celery worker in a thread of the test process, consuming from the real Redis broker."""

import gc
from contextlib import contextmanager


@contextmanager
def in_process_worker(*, pool: str = "solo", concurrency: int = 1):
    """Runs while the block runs; it takes what is already queued (purge first where that matters).

    Tests that use it see committed data only (transactional_db), as a worker in production does.
    """
    from celery.contrib.testing.worker import start_worker

    from ageverify.celery import app

    with start_worker(
        app, pool=pool, concurrency=concurrency, perform_ping_check=False, shutdown_timeout=10, loglevel="WARNING"
    ) as worker:
        yield worker
    # Workers reuse their database connection (CELERY_DB_REUSE_MAX); a stopped thread's one closes only
    # when collected, and an open one would block dropping the test database at the end.
    gc.collect()
