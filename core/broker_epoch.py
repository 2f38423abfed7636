"""The broker's epoch: a mark kept in the broker's Redis that is new whenever Redis came back without its data.

The analysis messages (they alone hold the pictures) and the webhook drains queued in a Redis that restarted
empty are gone, and nothing in Redis says so. The mark does: the first caller to find it missing writes a new
one, atomically, so every process reads the same: a random token, and when the epoch began, which is when
this Redis server started (its clock less its uptime), not when the mark was first missed. Work queued under
an older token, or before the current epoch began, was queued in the Redis that was lost; work queued in the
new Redis before anyone looked is not taken for lost. Redis must not evict keys (`maxmemory-policy
noeviction`, as a Celery broker needs anyway), or a new epoch would be taken for a restart.
"""

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

import redis
from django.conf import settings

EPOCH_KEY = "ageverify:broker-epoch"
UPTIME_RESOLUTION_SECONDS = 1.0
_READ_OR_BEGIN = """
local epoch = redis.call('GET', KEYS[1])
if epoch then return epoch end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
"""


@dataclass(frozen=True)
class BrokerEpoch:
    token: str
    began: datetime


@lru_cache(maxsize=4)
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, **settings.REDIS_REQUEST_OPTIONS)


def broker_epoch() -> BrokerEpoch | None:
    """The broker's current epoch, begun now if Redis has none; None when the broker is not Redis (the embedded
    demo's filesystem broker). Raises redis.RedisError when the broker is unreachable."""
    from celery import current_app

    url = current_app.conf.broker_url or ""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return None
    client = _client(url)
    value = client.get(EPOCH_KEY)
    if value is None:
        seconds, microseconds = client.time()
        # Redis counts its uptime in whole seconds between whole-second clock readings, so `now - uptime`
        # can fall up to a second before the real start: work queued in the old Redis in its last second
        # would then pass for the new one's. The epoch is taken to begin a second later instead; what the
        # new Redis received in its first second is then queued again once (a delivery's claim sends it
        # once; an analysis comes back as a retake that does not count).
        uptime = int(client.info("server")["uptime_in_seconds"])
        started = seconds + microseconds / 1e6 - uptime + UPTIME_RESOLUTION_SECONDS
        value = client.eval(_READ_OR_BEGIN, 1, EPOCH_KEY, f"{uuid.uuid4().hex}:{started:.6f}")
    token, _, began = value.decode().partition(":")
    return BrokerEpoch(token=token, began=datetime.fromtimestamp(float(began), tz=UTC))
