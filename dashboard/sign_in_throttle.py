"""Dashboard sign-in throttling: failure counters per username and per client address, kept in the cache.

Each counter lives for one fixed window from its first hit (the cache key's TTL), so a lock lasts for
the rest of that window. The username's counter is taken *before* the password is checked, atomically,
so a burst of parallel guesses cannot slip past the limit; a successful sign-in deletes it. The
address's counter counts failures only (a success must not buy an attacker with one real account more
guesses at others). The counters live in Redis in production so every web process shares them; if the
store cannot be reached the throttle fails open, with a warning: it must not lock everyone out.
"""

import hashlib
import logging
import math
from functools import wraps

import redis
from django.conf import settings
from django.core.cache import cache

from core.client_address import client_address  # noqa: F401 (the dashboard's forms and views call it here)

logger = logging.getLogger(__name__)


def wait_text() -> str:
    minutes = max(1, math.ceil(settings.DASHBOARD_LOGIN_WINDOW_SECONDS / 60))
    return f"{minutes} minute" if minutes == 1 else f"{minutes} minutes"


def _fail_open(result):
    def decorate(func):
        @wraps(func)
        def guarded(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except (redis.RedisError, OSError) as error:
                logger.warning("dashboard sign-in throttle unavailable, failing open: %s", error)
                return result

        return guarded

    return decorate


def _key(kind: str, value: str) -> str:
    # Hashed: the store holds no usernames, and any byte a client sends makes a valid key.
    return f"dashboard:throttle:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:32]}"


def _username_key(username: str) -> str:
    return _key("user", username.casefold())  # guesses at "Alice" and "alice" share one budget


def _hit(key: str) -> int:
    """Count one hit; the first hit of a window creates the key with the window as its TTL."""
    window = settings.DASHBOARD_LOGIN_WINDOW_SECONDS
    if cache.add(key, 1, timeout=window):
        return 1
    try:
        count = cache.incr(key)
    except ValueError:  # the window ended between add and incr: this hit opens the next one
        cache.add(key, 1, timeout=window)
        return 1
    if count == 1:
        # Only possible if the key expired between incr's existence check and INCR, which then
        # recreated it without a TTL: give it one, or the lock would never lift.
        cache.touch(key, window)
    return count


@_fail_open(True)
def sign_in_admitted(*, username: str, address: str | None) -> bool:
    """Whether this sign-in attempt may check its password; counts it against the username either way."""
    if address is not None:
        address_failures = cache.get(_key("ip", address), 0)
        if address_failures >= settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_IP:
            _log_refused(username, address, "address")
            return False
    if _hit(_username_key(username)) > settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_USER:
        _log_refused(username, address, "username")
        return False
    return True


@_fail_open(None)
def sign_in_failed(*, address: str | None) -> None:
    if address is not None:
        _hit(_key("ip", address))


@_fail_open(None)
def sign_in_succeeded(*, username: str) -> None:
    cache.delete(_username_key(username))


@_fail_open(True)
def password_reset_admitted(*, address: str | None) -> bool:
    """Whether a reset mail may be sent for this request; each request counts (each one can send a mail)."""
    if address is None:
        return True
    if _hit(_key("reset", address)) > settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_IP:
        logger.warning("dashboard password reset refused from %s: too many requests", address)
        return False
    return True


def _log_refused(username: str, address: str | None, limit: str) -> None:
    logger.warning(
        "dashboard sign-in refused for username %r from %s: too many failed attempts per %s",
        username[:150],
        address or "unknown address",
        limit,
    )
