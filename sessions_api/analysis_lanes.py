"""How many analyses of one tenant's users at one client address run at once (issue 45).

The analysis queues are served in turn (sessions_api.tasks.analysis_queue_of), so a flood from one address waits
behind its own work. But whenever the other queues are empty, every worker process takes the flooder's next
analysis, and a user who arrives then waits for one of them to end: with the worst pictures, seconds each. Here a
worker process that takes an analysis of a lane (tenant and address) that already has
ANALYSIS_RUNNING_PER_ADDRESS running puts it back for a second and is free for the next user at once. Two users
behind one address (an office, a mobile carrier's NAT) then take turns, a second or two each.

The running analyses of a lane are a Redis sorted set: member the task's id, score the moment its hard time limit
has passed, so that a worker killed in the middle of one does not hold its place for longer. Redis away: no limit
(the queues' turns still hold).
"""

from __future__ import annotations

import hashlib
import logging
import time
from contextlib import contextmanager

import redis
from django.conf import settings

from core.redis_client import redis_request_client
from core.redis_outage import redis_failure_note, redis_recently_failed

logger = logging.getLogger(__name__)

# Drops the lane's entries past their deadline, then takes a place if there is one: 1 taken, 0 full.
_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


def analysis_lane_of(tenant_id, client_address: str | None) -> str | None:
    """The lane of a tenant's analyses from one address: a digest, so no address is written to Redis. None
    without an address (nothing to limit by)."""
    if not client_address:
        return None
    return hashlib.sha256(f"{tenant_id} {client_address}".encode()).hexdigest()[:24]


@contextmanager
def analysis_lane_place(lane: str | None, task_id: str, hard_limit_seconds: float):
    """Yields True with a place taken in the lane for the block (given back after it), False when the lane's
    running analyses are at the limit."""
    limit = settings.ANALYSIS_RUNNING_PER_ADDRESS
    if lane is None or limit <= 0 or redis_recently_failed():
        yield True
        return
    key = f"analysis-lane:{lane}"
    now = time.time()
    client = redis_request_client()
    try:
        taken = client.eval(_TAKE, 1, key, now, now + hard_limit_seconds, limit, task_id, int(hard_limit_seconds) + 60)
    except redis.RedisError:
        logger.warning("analysis lanes: Redis is not answering; this analysis runs without its lane's limit")
        redis_failure_note()
        yield True
        return
    if not taken:
        yield False
        return
    try:
        yield True
    finally:
        try:
            client.zrem(key, task_id)
        except redis.RedisError:  # the place ends with its deadline
            logger.warning("analysis lanes: could not give back a place; it ends with its deadline")
