"""Fixtures of the sessions tests that run on both databases (tests/sessions_api/test_on_sqlite.py)."""

import pytest
from django.db import connection


@pytest.fixture
def postgresql_planner():
    """For a test of PostgreSQL's query plans (EXPLAIN): skipped when the suite runs on SQLite."""
    if connection.vendor != "postgresql":
        pytest.skip("a test of PostgreSQL's query planner")
