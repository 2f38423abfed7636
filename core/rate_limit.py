"""Token buckets, for every app: the partner API (CONTRACT 2), the flow's uploads, the dashboard's buttons.

Redis holds them when configured, process memory otherwise. A caller names its bucket (`tenant:7:live`,
`invite:7`, ...) and its rate and burst; what the buckets are for is decided by the callers (the API's in
sessions_api.api.throttle and .authentication, SDK sessions in sessions_api.client_access).

Headers: `RateLimit-Limit` is the bucket size (burst), `RateLimit-Remaining` the whole tokens left,
`RateLimit-Reset` the seconds until the bucket is full again. If Redis cannot be reached the limiter
fails open (logged): rate limiting protects the service, it must not take the API down with it.
A caller may name a generation key: the same Redis round trip reads it (and sets it to a new value if it
is missing), which is how the API confirms a key served from the authentication cache (tenants.selectors).
"""

import logging
import math
import threading
import time
from dataclasses import dataclass

import redis
from django.conf import settings
from redis.commands.core import Script

from .redis_client import redis_request_client as _redis_client
from .redis_outage import redis_failure_note, redis_recently_failed

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
local generation = false
if KEYS[2] then
  generation = redis.call('GET', KEYS[2])
  if not generation then
    -- A new value after a flush or a restart, so no process keeps trusting keys it cached before.
    generation = 'start-' .. now_parts[1] .. '.' .. now_parts[2]
    redis.call('SET', KEYS[2], generation)
  end
end
return {allowed, tostring(tokens), generation}
"""


@dataclass(frozen=True)
class BucketState:
    allowed: bool
    tokens: float
    rate: float
    burst: int
    generation: str | None = None  # the caller's generation key's value, read in the same round trip

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil((1 - self.tokens) / self.rate))

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.burst),
            "RateLimit-Remaining": str(max(0, math.floor(self.tokens))),
            "RateLimit-Reset": str(max(0, math.ceil((self.burst - self.tokens) / self.rate))),
        }


# Run by EVALSHA: the script's text goes to Redis once (again after a Redis restart), not with every request.
_bucket_script = Script(None, _BUCKET_SCRIPT.encode())


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


class PendingTake:
    """A token taken from the bucket, its answer still on the wire: `finish` reads it (once).

    The API sends the take of a read-only request first and reads the answer after its own database
    read, so the two round trips overlap instead of adding up (sessions_api.api.throttle). Each thread
    keeps one connection of its own for this (no pool to check out of and back into on every request);
    it is closed whenever an answer might still be unread on it.
    """

    def __init__(self, key: str, *, rate: float, burst: int, generation_key: str | None = None):
        self._key, self._rate, self._burst, self._generation_key = key, rate, burst, generation_key
        self._connection = None
        self._state: BucketState | None = None
        self._done = False
        if not settings.REDIS_URL:
            self._state, self._done = _memory_take(key, rate, burst), True
            return
        if redis_recently_failed():  # fail open at once rather than wait for the timeout again
            self._done = True
            return
        try:
            self._connection = _thread_connection()
            packed = _packed_take(self._connection, key, rate, burst, generation_key)
            self._connection.send_packed_command(packed, check_health=False)
        except redis.ConnectionError:  # closed by Redis since its last use (a restart): `finish` takes anew
            self._drop()
        except redis.RedisError as error:
            self._drop()
            self._fail_open(error)

    def _keys(self) -> list[str]:
        if self._generation_key is None:
            return [f"ratelimit:{self._key}"]
        return [f"ratelimit:{self._key}", self._generation_key]

    def _fail_open(self, error: Exception) -> None:
        redis_failure_note()
        logger.warning("rate limiter unavailable, failing open: %s", error)
        self._state, self._done = None, True

    def _drop(self) -> None:
        # An answer may still be unread on it: closed, so that the next request reads no stale answer.
        if self._connection is not None:
            self._connection.disconnect()
            self._connection = None

    def finish(self) -> BucketState | None:
        """The bucket's answer; None when the store is unreachable (the caller lets the request through)."""
        if self._done:
            return self._state
        self._done = True
        try:
            if self._connection is None:
                reply = self._take_anew()
            else:
                try:
                    reply = self._connection.read_response()
                except redis.exceptions.NoScriptError:  # Redis restarted (or never saw the script)
                    self._release()
                    reply = self._take_anew()
                except redis.ConnectionError:
                    # Closed by Redis since this thread last used it (a restart): not an outage yet, so once more
                    # on the pool's connections, which open anew. A timeout is not tried again.
                    self._drop()
                    reply = self._take_anew()
                else:
                    self._release()
        except redis.RedisError as error:
            self._drop()
            self._fail_open(error)
            return None
        allowed, tokens, generation = reply
        self._state = BucketState(
            allowed=bool(allowed),
            tokens=float(tokens),
            rate=self._rate,
            burst=self._burst,
            generation=None if generation is None else generation.decode(),
        )
        return self._state

    def _take_anew(self):
        """The token taken in the usual way, on the process's client: loads the script if needed."""
        return _bucket_script(keys=self._keys(), args=[self._rate, self._burst], client=_redis_client())

    def _release(self) -> None:
        self._connection = None  # the thread's connection, its answer read: ready for the next request

    def abandon(self) -> None:
        """The request ended without reading the answer (an unexpected error): free the connection."""
        if not self._done:
            self._done = True
            self._drop()


_local = threading.local()


def _thread_connection() -> redis.Connection:
    """This thread's own connection for the limiter, with the client's settings (timeouts, no retry)."""
    client = _redis_client()
    connection = getattr(_local, "connection", None)
    if connection is None or _local.client is not client:  # a new client: new settings (tests change them)
        if connection is not None:
            connection.disconnect()
        connection = _local.connection = redis.Connection(**client.connection_pool.connection_kwargs)
        _local.client = client
    return connection


_PACKED_MAX_ENTRIES = 10_000
_packed: dict[tuple, list[bytes]] = {}


def _packed_take(connection, key: str, rate: float, burst: int, generation_key: str | None) -> list[bytes]:
    """The EVALSHA command as sent on the wire, packed once per bucket and limits (they rarely change)."""
    packed = _packed.get((key, rate, burst, generation_key))
    if packed is None:
        if len(_packed) >= _PACKED_MAX_ENTRIES:
            _packed.clear()
        keys = [f"ratelimit:{key}"] if generation_key is None else [f"ratelimit:{key}", generation_key]
        packed = connection.pack_command("EVALSHA", _bucket_script.sha, len(keys), *keys, rate, burst)
        _packed[(key, rate, burst, generation_key)] = packed
    return packed


def _memory_take(key: str, rate: float, burst: int) -> BucketState:
    value = _memory.take(key, rate, burst)
    if value >= 0:
        return BucketState(allowed=True, tokens=value, rate=rate, burst=burst)
    return BucketState(allowed=False, tokens=-value - 1, rate=rate, burst=burst)


def bucket_take(key: str, *, rate: float, burst: int) -> BucketState | None:
    """Take one token; None when the store is unreachable (the caller lets the request through)."""
    return PendingTake(key, rate=rate, burst=burst).finish()
