"""Token buckets for the API (CONTRACT 2): one per tenant and mode, one per client address for failed keys.

Redis holds them when configured, process memory otherwise. All of a tenant's keys of one mode share
a bucket, so generating keys does not multiply the limit; sandbox calls have their own, so a test
loop cannot starve live traffic. Requests without a valid key are limited per client address,
so guessing keys or flooding 401s costs the caller, not the service.

Headers: `RateLimit-Limit` is the bucket size (burst), `RateLimit-Remaining` the whole tokens left,
`RateLimit-Reset` the seconds until the bucket is full again. If Redis cannot be reached the limiter
fails open (logged): rate limiting protects the service, it must not take the API down with it.
"""
import logging
import math
import threading
import time
from dataclasses import dataclass
from functools import lru_cache

import redis
from django.conf import settings
from rest_framework.throttling import BaseThrottle

from dashboard.sign_in_throttle import client_address

logger = logging.getLogger(__name__)

_BUCKET_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1]) or burst
local ts = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, tostring(tokens)}
"""


@dataclass(frozen=True)
class BucketState:
    allowed: bool
    tokens: float
    rate: float
    burst: int

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil((1 - self.tokens) / self.rate))

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.burst),
            "RateLimit-Remaining": str(max(0, math.floor(self.tokens))),
            "RateLimit-Reset": str(max(0, math.ceil((self.burst - self.tokens) / self.rate))),
        }


@lru_cache(maxsize=1)
def _redis_client():
    return redis.Redis.from_url(settings.REDIS_URL, socket_timeout=0.5, socket_connect_timeout=0.5)


class _MemoryBuckets:
    def __init__(self):
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str, rate: float, burst: int) -> float | None:
        with self._lock:
            now = time.monotonic()
            tokens, ts = self._buckets.get(key, (burst, now))
            tokens = min(burst, tokens + (now - ts) * rate)
            allowed = tokens >= 1
            if allowed:
                tokens -= 1
            self._buckets[key] = (tokens, now)
            return tokens if allowed else -tokens - 1  # negative encodes "refused"


_memory = _MemoryBuckets()


def bucket_take(key: str, *, rate: float, burst: int) -> BucketState | None:
    """Take one token; None when the store is unreachable (the caller lets the request through)."""
    if settings.REDIS_URL:
        try:
            allowed, tokens = _redis_client().eval(_BUCKET_SCRIPT, 1, f"ratelimit:{key}", rate, burst)
        except redis.RedisError as error:
            logger.warning("rate limiter unavailable, failing open: %s", error)
            return None
        return BucketState(allowed=bool(allowed), tokens=float(tokens), rate=rate, burst=burst)
    value = _memory.take(key, rate, burst)
    if value >= 0:
        return BucketState(allowed=True, tokens=value, rate=rate, burst=burst)
    return BucketState(allowed=False, tokens=-value - 1, rate=rate, burst=burst)


def unauthenticated_request_refused(request) -> BucketState | None:
    """Take a token from the client address's bucket for a request without a valid key; its state if refused."""
    address = client_address(request) or "unknown"
    state = bucket_take(f"nokey:{address}", rate=settings.API_UNAUTHENTICATED_RATE_PER_SECOND,
                        burst=settings.API_UNAUTHENTICATED_BURST)
    return state if state is not None and not state.allowed else None


class ApiKeyRateThrottle(BaseThrottle):
    """DRF throttle keyed by the authenticated key's tenant and mode, with the tenant's override if set."""

    def allow_request(self, request, view):
        api_key = request.auth
        if api_key is None:
            return True
        tenant = api_key.tenant
        rate = tenant.rate_limit_per_second or settings.API_RATE_LIMIT_PER_SECOND
        burst = tenant.rate_limit_burst or max(settings.API_RATE_LIMIT_BURST, rate)
        state = bucket_take(f"tenant:{tenant.pk}:{api_key.mode}", rate=rate, burst=burst)
        request.rate_limit_state = state
        return state is None or state.allowed

    def wait(self):
        return None
