"""Fixtures for webhook tests: the shared HTTPS receiver, with retries that come quickly, and both ways of
claiming and recording an attempt."""

import pytest

# Short retry waits keep the tests fast; the shape (8 attempts, the first immediate) is the real one.
FAST_SCHEDULE = [0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]


@pytest.fixture
def receiver(receiver, settings):
    """The receiver of tests/conftest.py, with the retry schedule shortened."""
    settings.WEBHOOK_RETRY_SCHEDULE = FAST_SCHEDULE
    return receiver


# An attempt is claimed and recorded in one statement each on PostgreSQL (webhooks.attempt_sql) and by
# ORM transactions elsewhere (SQLite, the demo): every test of these modules runs both ways, so the two
# cannot drift apart. (test_attempt_queries counts the PostgreSQL statements; it runs that way only.)
BOTH_WAYS = {"test_concurrency", "test_delivery", "test_drains", "test_modes", "test_outbox", "test_resend"}
BOTH_WAYS |= {"test_retry", "test_triggers"}


def pytest_generate_tests(metafunc):
    if metafunc.module.__name__.rpartition(".")[2] in BOTH_WAYS:
        metafunc.parametrize("attempt_statements", ["postgresql-statements", "orm-as-on-sqlite"], indirect=True)


@pytest.fixture(autouse=True)
def attempt_statements(request, monkeypatch):
    """Which implementation claims and records attempts in this test (PostgreSQL's statements by default)."""
    way = getattr(request, "param", "postgresql-statements")
    if way == "orm-as-on-sqlite":
        import webhooks.delivery

        monkeypatch.setattr(webhooks.delivery, "hot_sql_applies", lambda: False)
    return way
