"""Which errors mean a backing service is down (503 on the API, the outage page on the pages) and which are bugs."""

import pytest
from django.db import DatabaseError, IntegrityError, InterfaceError, OperationalError

from core.outages import is_backend_outage


@pytest.mark.parametrize(
    "error",
    [
        OperationalError("server closed the connection"),
        InterfaceError("cursor already closed"),
        DatabaseError("consuming input failed: terminating connection due to administrator command"),
    ],
)
def test_a_lost_database_is_an_outage(error):
    assert is_backend_outage(error)


@pytest.mark.parametrize(
    "error", [IntegrityError("duplicate key value"), DatabaseError("syntax error at or near"), ValueError("bug")]
)
def test_a_refused_query_or_a_bug_is_not_an_outage(error):
    assert not is_backend_outage(error)
