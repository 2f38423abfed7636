"""A tenant's drains: a few tasks that each send the tenant's due deliveries one after another.

One queued task per delivery costs the delivery worker about as much CPU as the attempt itself (the
broker read, the task's tracing, a thread hand-over); that, not the network, was what a worker process
could do per second (bench/webhooks.py). So a new delivery does not get a task of its own: it wakes a
drain of its tenant, unless WEBHOOK_TENANT_DRAINS of them are already at work (across all workers),
in which case one of those will take it. A drain claims the tenant's oldest due delivery nobody holds
(the same claim, send and record as any attempt, webhooks.delivery), then the next, for at most
WEBHOOK_DRAIN_SLICE_SECONDS; then, if there may be more, it puts itself back at the end of the queue,
so that other tenants' tasks get their turn. In a worker it takes one of its tenant's slots
(webhooks.concurrency) like any attempt, and is put back on the queue with a countdown if it may not.

Which drains are at work is a sorted set in Redis per tenant (member: the drain's token, score: when
it was last seen at work). A drain that finds nothing to claim leaves the set, then looks once more:
a delivery written while it was leaving may have found it still in the set and woken no other; the
last drain out therefore always sees it. A drain not seen for DRAIN_STALE_SECONDS no longer counts; one
whose worker process is known dead stops counting at once: a drain at work is held by its process (a hash per
tenant, token -> process), and each process that runs drains keeps a key alive in Redis for a few seconds at a
time (ALIVE_SECONDS). A SIGKILLed worker's key lapses; the next wake of the tenant, or the sweep's look at the
drains (`dead_drains_release`, every few seconds), then drops its drains and wakes a new one. Nothing here can
lose a delivery: the row is due in the database, and if no drain takes it (Redis unreachable, a publish lost, a
worker killed) the sweep queues it as before (webhooks.services), after WEBHOOK_REQUEUE_AFTER_SECONDS.

Drains need PostgreSQL (the claim of the tenant's next delivery is webhooks.attempt_sql's), Redis and a
worker; without them (the embedded demo, eager tasks), or with WEBHOOK_TENANT_DRAINS = 0, each delivery
is queued alone.
"""

import logging
import os
import socket
import threading
import time
import uuid

import redis
from django.conf import settings
from redis.commands.core import Script

from core.hot_sql import hot_sql_applies
from core.redis_client import redis_request_client as _redis_client
from core.redis_outage import redis_failure_note, redis_recently_failed

from .concurrency import deferral_countdown, tenant_slots
from .delivery import webhook_delivery_attempt_next_of_tenant
from .queueing import queue_drain

logger = logging.getLogger(__name__)

# Longer than any one attempt (WEBHOOK_SEND_LEASE_SECONDS exceeds the total timeout) plus the longest
# deferral: a drain at work is seen again well within it.
DRAIN_STALE_SECONDS = 120
_SEEN_AGAIN_AFTER = 10.0

# A process running drains refreshes its key this often; the key lapses ALIVE_SECONDS after the last refresh.
ALIVE_SECONDS = 3
_ALIVE_REFRESH = 1.0
_ALIVE_PREFIX = "webhooks:alive:"

# KEYS[1]: the tenant's set, KEYS[2]: which process holds each of its drains. Drops the drains whose holding
# process is no longer alive (its key under the prefix, an ARGV, has lapsed), counting them in `dropped`.
_DROP_DEAD = """
local dropped = 0
local held = redis.call('HGETALL', KEYS[2])
for i = 1, #held, 2 do
  if redis.call('EXISTS', {prefix} .. held[i + 1]) == 0 then
    redis.call('ZREM', KEYS[1], held[i])
    redis.call('HDEL', KEYS[2], held[i])
    dropped = dropped + 1
  end
end
"""
# ARGV: the alive keys' prefix. Returns how many drains it dropped.
_RELEASE_DEAD = (_DROP_DEAD.format(prefix="ARGV[1]") + "return dropped\n").encode()
# ARGV: now, stale before, most drains, token, key lifetime, the alive keys' prefix. 1: joined.
_JOIN_SCRIPT = (
    _DROP_DEAD.format(prefix="ARGV[6]")
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""
).encode()
_join_script = Script(None, _JOIN_SCRIPT)
_release_dead_script = Script(None, _RELEASE_DEAD)


def drains_apply() -> bool:
    # Eager tasks (a development setting) would run a drain, and each of its slices, inside the request.
    return bool(
        settings.WEBHOOK_TENANT_DRAINS > 0
        and settings.REDIS_URL
        and hot_sql_applies()
        and not settings.CELERY_TASK_ALWAYS_EAGER
    )


def _key(tenant_id: str) -> str:
    return f"webhooks:drains:{tenant_id}"


def _holders_key(tenant_id: str) -> str:
    return f"webhooks:drains:{tenant_id}:held"


class _Alive:
    """This process's key in Redis, refreshed by a daemon thread while the process lives (started at its first
    drain); its name is new in every process, so a worker restarted under the same node name is not its
    predecessor."""

    def __init__(self):
        self._lock = threading.Lock()
        self._thread = None
        self.name = ""

    def ensure(self) -> str:
        with self._lock:
            if self._thread is None or not self._thread.is_alive() or self._thread.pid != os.getpid():
                self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
                self._thread = threading.Thread(target=self._keep, name="drains-alive", daemon=True)
                self._thread.pid = os.getpid()
                self._thread.start()
        return self.name

    def refresh(self, client) -> None:
        client.set(_ALIVE_PREFIX + self.name, 1, ex=ALIVE_SECONDS)

    def _keep(self) -> None:
        failing = False
        while True:
            time.sleep(_ALIVE_REFRESH)
            try:
                self.refresh(_redis_client())
            except Exception as error:  # noqa: BLE001 - the thread must outlive any failure; its drains may then
                # be dropped meanwhile, and a few more run at once. Said once per outage, not every second.
                if not failing:
                    logger.warning("webhook drains' process key not refreshed: %s", error)
                failing = True
            else:
                failing = False


_alive = _Alive()


def _hold(tenant_id: str, token: str) -> None:
    """The drain is at work in this process: it counts for as long as the process is alive."""
    try:
        client = _redis_client()
        client.hset(_holders_key(tenant_id), token, _alive.ensure())
        client.expire(_holders_key(tenant_id), DRAIN_STALE_SECONDS)
        _alive.refresh(client)
    except redis.RedisError as error:  # it still counts until stale, as before
        logger.warning("webhook drain of tenant %s not held: %s", tenant_id, error)


def dead_drains_release() -> int:
    """Drop the drains held by processes that died (a SIGKILLed worker) and wake a new drain for each tenant that
    had one; the number dropped. The sweep calls it, so a tenant's due deliveries do not wait for staleness."""
    if not drains_apply() or redis_recently_failed():
        return 0
    dropped, client = 0, _redis_client()
    try:
        for key in client.scan_iter(match="webhooks:drains:*:held", count=500):
            tenant_id = key.decode().removeprefix("webhooks:drains:").removesuffix(":held")
            released = _release_dead_script(keys=[_key(tenant_id), key], args=[_ALIVE_PREFIX], client=client)
            if released:
                dropped += released
                logger.warning("released %d webhook drains of tenant %s: their worker died", released, tenant_id)
                drain_wake(tenant_id)
    except redis.RedisError as error:
        redis_failure_note()
        logger.warning("could not look for dead webhook drains: %s", error)
    return dropped


def _join(tenant_id: str) -> str | None:
    """A new drain's token if fewer than WEBHOOK_TENANT_DRAINS are at work, else None."""
    token = uuid.uuid4().hex
    now = time.time()
    joined = _join_script(
        keys=[_key(tenant_id), _holders_key(tenant_id)],
        client=_redis_client(),
        args=[
            now,
            now - DRAIN_STALE_SECONDS,
            settings.WEBHOOK_TENANT_DRAINS,
            token,
            DRAIN_STALE_SECONDS,
            _ALIVE_PREFIX,
        ],
    )
    return token if joined else None


def _seen(tenant_id: str, token: str) -> None:
    try:
        client = _redis_client()
        client.zadd(_key(tenant_id), {token: time.time()})
        client.expire(_key(tenant_id), DRAIN_STALE_SECONDS)
    except redis.RedisError as error:  # it stops counting once it is stale; the sweep is there
        logger.warning("webhook drain of tenant %s not seen: %s", tenant_id, error)


def _leave(tenant_id: str, token: str) -> None:
    try:
        client = _redis_client()
        client.zrem(_key(tenant_id), token)
        client.hdel(_holders_key(tenant_id), token)
    except redis.RedisError as error:  # it stops counting once it is stale
        logger.warning("webhook drain of tenant %s could not leave: %s", tenant_id, error)


def drain_wake(tenant_id: str) -> bool:
    """See to it that a drain of the tenant takes its due deliveries; False when that cannot be arranged
    now (drains do not apply, Redis or the broker failed) and the caller must queue the delivery itself."""
    if not drains_apply() or redis_recently_failed():
        return False
    try:
        token = _join(tenant_id)
    except redis.RedisError as error:
        redis_failure_note()
        logger.warning("could not wake a webhook drain of tenant %s: %s", tenant_id, error)
        return False
    if token is None:
        return True  # enough drains are at work on the tenant's deliveries; the last one out looks again
    if queue_drain(tenant_id, token):
        return True
    _leave(tenant_id, token)
    return False


def _later(tenant_id: str, token: str, *, countdown: float | None, deferrals: int) -> None:
    """Back on the queue, still counted as at work (its tenant's new deliveries wait for it), held by no process."""
    _seen(tenant_id, token)
    try:
        _redis_client().hdel(_holders_key(tenant_id), token)
    except redis.RedisError:  # then it counts while this process lives, or until stale
        pass
    if not queue_drain(tenant_id, token, countdown=countdown, deferrals=deferrals):
        _leave(tenant_id, token)


def webhook_tenant_drain(*, tenant_id: str, token: str, deferrals: int = 0) -> int:
    """Run the drain if the tenant has a free slot in this worker, else put it back; the attempts it made."""
    with tenant_slots.hold(tenant_id) as held:
        if held:
            return _drain(tenant_id, token)
    _later(tenant_id, token, countdown=deferral_countdown(deferrals), deferrals=deferrals + 1)
    return 0


def _drain(tenant_id: str, token: str) -> int:
    _hold(tenant_id, token)
    attempts = 0
    now = time.monotonic()
    slice_end, seen_at = now + settings.WEBHOOK_DRAIN_SLICE_SECONDS, now
    while True:
        if webhook_delivery_attempt_next_of_tenant(tenant_id=tenant_id) is None:
            _leave(tenant_id, token)
            if webhook_delivery_attempt_next_of_tenant(tenant_id=tenant_id) is None:
                return attempts
            try:
                token = _join(tenant_id)
            except redis.RedisError:
                token = None
            if token is None:  # others are at work (or Redis is not answering: the sweep is there)
                return attempts + 1
            _hold(tenant_id, token)
        attempts += 1
        now = time.monotonic()
        if now >= slice_end:
            _later(tenant_id, token, countdown=None, deferrals=0)
            return attempts
        if now - seen_at >= _SEEN_AGAIN_AFTER:
            _seen(tenant_id, token)
            seen_at = now
