"""The process's Redis client for work done inside a request or a task: short timeouts (REDIS_REQUEST_OPTIONS)."""

from functools import lru_cache

import redis
from django.conf import settings


@lru_cache(maxsize=1)
def redis_request_client() -> redis.Redis:
    """One client (and connection pool) per process; tests that point REDIS_URL elsewhere call cache_clear()."""
    return redis.Redis.from_url(settings.REDIS_URL, **settings.REDIS_REQUEST_OPTIONS)
