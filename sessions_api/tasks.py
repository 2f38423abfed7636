"""Celery shells around session services."""

import base64
import zlib

from celery import shared_task
from django.conf import settings

from . import analysis, watchdog
from .analysis import ANALYSIS_TASK_EXPIRES
from .analysis_lanes import analysis_lane_of, analysis_lane_place
from .retention import final_sessions_purge as _final_sessions_purge
from .services import idempotency_records_purge as _idempotency_records_purge
from .state_machine import sessions_expire_due as _sessions_expire_due


@shared_task(name="sessions_api.tasks.sessions_expire_due")
def sessions_expire_due() -> int:
    return _sessions_expire_due()


@shared_task(name="sessions_api.tasks.idempotency_records_purge")
def idempotency_records_purge() -> int:
    return _idempotency_records_purge()


@shared_task(name="sessions_api.tasks.final_sessions_purge")
def final_sessions_purge() -> int:
    return _final_sessions_purge()


@shared_task(name="sessions_api.tasks.stuck_analyses_release")
def stuck_analyses_release() -> int:
    return watchdog.stuck_analyses_release()


@shared_task(name="sessions_api.tasks.lost_analyses_release")
def lost_analyses_release() -> int:
    return watchdog.lost_analyses_release()


# --- analysis of selfies and documents (sessions_api.analysis) ---
# The images travel in the task message (base64, as the JSON serializer needs text) and nowhere
# else; an unconsumed message expires (ANALYSIS_TASK_EXPIRES), so a backlog cannot keep biometric data around.


ANALYSIS_QUEUE = "analysis"


def analysis_queue_of(tenant_id, client_address: str | None = None) -> str:
    """The queue of a tenant's analyses sent from one client address: one of ANALYSIS_QUEUE_SHARDS, chosen by the
    tenant's id and the address, so that one address's flood waits behind its own work, not in front of the
    tenant's other users (issue 45); without an address, by the tenant's id alone."""
    shards = settings.ANALYSIS_QUEUE_SHARDS if settings.REDIS_URL else 1
    if shards == 1:
        return ANALYSIS_QUEUE
    key = str(tenant_id) if client_address is None else f"{tenant_id} {client_address}"
    return f"{ANALYSIS_QUEUE}.{zlib.crc32(key.encode()) % shards}"


def analysis_queues() -> list[str]:
    """Every queue an analysis worker (`celery worker -Q analysis`) takes from, in turn (ageverify.celery)."""
    shards = settings.ANALYSIS_QUEUE_SHARDS if settings.REDIS_URL else 1
    return [ANALYSIS_QUEUE] + ([f"{ANALYSIS_QUEUE}.{shard}" for shard in range(shards)] if shards > 1 else [])


def _time_limits() -> dict:
    # The worker's own (its environment, read when it imports this module), not the queueing web process's: the
    # message carries none. The soft limit raises SoftTimeLimitExceeded wherever the analysis is, and
    # sessions_api.analysis makes the attempt a retake that costs no attempt (the worker goes on); the hard
    # limit, later, ends a process stuck in C code.
    soft = settings.ANALYSIS_SOFT_TIME_LIMIT
    return {"soft_time_limit": soft, "time_limit": soft + 30}


# Explicitly none in the message (Celery would put the queueing process's task defaults there), so the worker
# applies its own.
_WORKERS_OWN_TIME_LIMITS = {"soft_time_limit": None, "time_limit": None}


def _encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# A worker process that takes an analysis whose lane (tenant and client address) already has its running analyses
# puts it back for this long and takes the next user's (sessions_api.analysis_lanes).
ANALYSIS_LANE_WAIT_SECONDS = 1


def _in_lane(task, lane: str | None):
    """The analysis's place in its lane; when the lane is full, the task goes back to wait (Retry is raised)."""
    return analysis_lane_place(lane, task.request.id or "", task.time_limit or settings.ANALYSIS_SOFT_TIME_LIMIT + 30)


@shared_task(name="sessions_api.tasks.selfie_analyse", bind=True, max_retries=None, **_time_limits())
def selfie_analyse(
    self, session_id: str, frames: list[list[str]], capture: dict | None = None, lane: str | None = None
) -> None:
    with _in_lane(self, lane) as placed:
        if not placed:
            raise self.retry(countdown=ANALYSIS_LANE_WAIT_SECONDS)
        analysis.selfie_analyse(
            session_id=session_id, frames=[(step, base64.b64decode(data)) for step, data in frames], capture=capture
        )


@shared_task(name="sessions_api.tasks.document_analyse", bind=True, max_retries=None, **_time_limits())
def document_analyse(
    self,
    session_id: str,
    image: str | None,
    back: str | None = None,
    frames: list[list[str]] | None = None,
    capture: dict | None = None,  # absent from messages queued before the document page sent its capture record
    lane: str | None = None,  # absent from messages queued before lanes (issue 45)
) -> None:
    with _in_lane(self, lane) as placed:
        if not placed:
            raise self.retry(countdown=ANALYSIS_LANE_WAIT_SECONDS)
        analysis.document_analyse(
            session_id=session_id,
            image=base64.b64decode(image) if image else None,  # None: the document kept from an earlier attempt
            back=base64.b64decode(back) if back else None,
            frames=[(step, base64.b64decode(data)) for step, data in frames or []],
            capture=capture,
        )


def _shown_as(session_id: str, pictures: int) -> dict:
    # What Flower, `celery inspect` and task events display in place of the arguments: by default
    # Celery shows their first KiB, here the pictures themselves.
    return {"argsrepr": repr([session_id, f"<{pictures} picture(s) omitted>"]), "kwargsrepr": "{}"}


def selfie_analysis_queue(
    session_id: str,
    frames: list[tuple[str, bytes]],
    capture: dict | None = None,
    *,
    tenant_id,
    client_address: str | None = None,
) -> None:
    selfie_analyse.apply_async(
        queue=analysis_queue_of(tenant_id, client_address),
        args=[session_id, [[step, _encode(data)] for step, data in frames], capture],
        kwargs={"lane": analysis_lane_of(tenant_id, client_address)},
        expires=ANALYSIS_TASK_EXPIRES,
        **_WORKERS_OWN_TIME_LIMITS,
        **_shown_as(session_id, len(frames)),
    )


def document_analysis_queue(
    session_id: str,
    image: bytes | None,
    back: bytes | None = None,
    frames: list[tuple[str, bytes]] | None = None,
    capture: dict | None = None,
    *,
    tenant_id,
    client_address: str | None = None,
) -> None:
    frames = frames or []
    document_analyse.apply_async(
        queue=analysis_queue_of(tenant_id, client_address),
        args=[
            session_id,
            _encode(image) if image else None,
            _encode(back) if back else None,
            [[step, _encode(data)] for step, data in frames],
            capture,
        ],
        kwargs={"lane": analysis_lane_of(tenant_id, client_address)},
        expires=ANALYSIS_TASK_EXPIRES,
        **_WORKERS_OWN_TIME_LIMITS,
        **_shown_as(session_id, bool(image) + bool(back) + len(frames)),
    )
