"""Waiting for what another thread (a Celery worker, the webhook receiver) does, with a deadline."""

import time


def wait_until(predicate, *, timeout: float = 10.0, interval: float = 0.05):
    """Poll `predicate` until it returns something truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)
