"""Per process memory of a Redis failure: for a few seconds after one, request-path callers skip Redis at once.

Every Redis call on the request path already gives up after REDIS_REQUEST_TIMEOUT; without this, a
frozen Redis would still cost every request that timeout once per call (rate limit, then webhook
publish). After a failure the rate limiter fails open and a webhook is left to the outbox sweep
without trying, until REDIS_OUTAGE_BACKOFF_SECONDS have passed and the next call tries Redis again.
"""

import time

from django.conf import settings

_skip_until = 0.0


def redis_recently_failed() -> bool:
    return time.monotonic() < _skip_until


def redis_failure_note() -> None:
    global _skip_until
    _skip_until = time.monotonic() + settings.REDIS_OUTAGE_BACKOFF_SECONDS
