"""Whether an error means a backing service is down: the API answers 503 (retry), the pages their outage page."""

from functools import wraps

from django.db import DatabaseError, InterfaceError, OperationalError

# Seconds a client is told to wait before retrying after an outage (`Retry-After`), on the API and the pages.
SERVICE_UNAVAILABLE_RETRY_AFTER = 5


def is_backend_outage(exc: BaseException) -> bool:
    if isinstance(exc, (OperationalError, InterfaceError)):
        return True
    # psycopg raises these below Django's wrappers when the server goes away mid-query.
    return isinstance(exc, DatabaseError) and "connection" in str(exc).lower()


def outage_answered(answer, *, logger, where: str):
    """A view decorator: an outage of a backing service (is_backend_outage) is logged as a warning and answered
    with `answer(request)` (a page's outage page, a protocol's own error), never a stack trace."""

    def decorate(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            try:
                return view(request, *args, **kwargs)
            except Exception as error:
                if not is_backend_outage(error):
                    raise
                logger.warning("%s: backend unavailable on %s: %s", where, request.path, error)
                return answer(request)

        return wrapper

    return decorate
