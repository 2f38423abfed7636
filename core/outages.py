"""Whether an error means a backing service is down: the API answers 503 (retry), the pages their outage page."""

from django.db import DatabaseError, InterfaceError, OperationalError

# Seconds a client is told to wait before retrying after an outage (`Retry-After`), on the API and the pages.
SERVICE_UNAVAILABLE_RETRY_AFTER = 5


def is_backend_outage(exc: BaseException) -> bool:
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    # psycopg raises these below Django's wrappers when the server goes away mid-query.
    return isinstance(exc, DatabaseError) and "connection" in str(exc).lower()
