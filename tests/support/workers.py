"""A real Celery worker in a thread of the test process, consuming from the real Redis broker, and what it has done."""

import gc
import threading
from contextlib import contextmanager

from celery.signals import after_task_publish, task_postrun

# Which tasks this process published and which of them ran to their end here: the state a test waits on
# to say "nothing (more) was sent" once every task queued so far has run, instead of sleeping.
_ledger_lock = threading.Lock()
_published: set[str] = set()
_finished: set[str] = set()


@after_task_publish.connect(weak=False)
def _note_published(headers=None, **_kwargs):
    with _ledger_lock:
        _published.add((headers or {}).get("id"))  # task message protocol 2: the id is a header


@task_postrun.connect(weak=False)
def _note_finished(task_id=None, **_kwargs):
    with _ledger_lock:
        _finished.add(task_id)


def tasks_settled() -> bool:
    """Every task this process published since its in-process worker started has run to its end in it.

    Only with `in_process_worker` (the `celery_worker` fixture): tasks taken by another process never end here.
    """
    with _ledger_lock:
        return _published <= _finished


@contextmanager
def in_process_worker(*, pool: str = "solo", concurrency: int = 1):
    """Runs while the block runs; it takes what is already queued (purge first where that matters).

    Tests that use it see committed data only (transactional_db), as a worker in production does.
    """
    from celery.contrib.testing.worker import start_worker

    from ageverify.celery import analysis_queues_consumed, app

    analysis_queues_consumed(app.amqp.queues)  # as `celery worker` does (its celeryd_after_setup signal)

    with _ledger_lock:
        _published.clear()
        _finished.clear()
    with start_worker(
        app, pool=pool, concurrency=concurrency, perform_ping_check=False, shutdown_timeout=10, loglevel="WARNING"
    ) as worker:
        yield worker
    # The test worker stops by terminating, and Celery's thread pool shuts its threads down only on a warm
    # stop: they would stay, idle, each keeping its database connection (CELERY_DB_REUSE_MAX) open, and an
    # open one blocks dropping the test database at the end. A stopped thread's connection closes when
    # it is collected.
    executor = getattr(worker.pool, "executor", None)
    if executor is not None:
        executor.shutdown(wait=True)
    gc.collect()
