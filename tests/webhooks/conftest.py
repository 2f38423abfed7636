"""Fixtures for webhook tests: the shared HTTPS receiver, with retries that come quickly."""

import pytest

# Short retry waits keep the tests fast; the shape (8 attempts, the first immediate) is the real one.
FAST_SCHEDULE = [0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]


@pytest.fixture
def receiver(receiver, settings):
    """The receiver of tests/conftest.py, with the retry schedule shortened."""
    settings.WEBHOOK_RETRY_SCHEDULE = FAST_SCHEDULE
    return receiver
