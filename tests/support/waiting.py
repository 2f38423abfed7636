"""Waiting for what another thread (a Celery worker, the webhook receiver) does, with a deadline."""

import time
from collections.abc import Callable


def wait_until(predicate, *, timeout: float = 10.0, interval: float = 0.05, describe: Callable[[], str] | None = None):
    """Poll `predicate` until it returns something truthy; fail the test after `timeout` seconds.

    `describe` adds what helps to read the failure (a worker's log, say) to its message.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            detail = f"\n{describe()}" if describe is not None else ""
            raise AssertionError(f"condition not met within {timeout} s{detail}")
        time.sleep(interval)
