"""Celery shells around session services."""
import base64

from celery import shared_task

from . import analysis
from .idempotency import idempotency_records_purge as _idempotency_records_purge
from .state_machine import sessions_expire_due as _sessions_expire_due


@shared_task(name="sessions_api.tasks.sessions_expire_due")
def sessions_expire_due() -> int:
    return _sessions_expire_due()


@shared_task(name="sessions_api.tasks.idempotency_records_purge")
def idempotency_records_purge() -> int:
    return _idempotency_records_purge()


# --- analysis of selfies and documents (sessions_api.analysis) ---
# The images travel in the task message (base64, as the JSON serializer needs text) and nowhere
# else; an unconsumed message expires, so a backlog cannot keep biometric data around.
ANALYSIS_TASK_EXPIRES = 10 * 60


def _encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@shared_task(name="sessions_api.tasks.selfie_analyse")
def selfie_analyse(session_id: str, frames: list[list[str]]) -> None:
    analysis.selfie_analyse(session_id=session_id, frames=[(step, base64.b64decode(data)) for step, data in frames])


@shared_task(name="sessions_api.tasks.document_analyse")
def document_analyse(session_id: str, image: str) -> None:
    analysis.document_analyse(session_id=session_id, image=base64.b64decode(image))


def selfie_analysis_queue(session_id: str, frames: list[tuple[str, bytes]]) -> None:
    selfie_analyse.apply_async(
        args=[session_id, [[step, _encode(data)] for step, data in frames]], expires=ANALYSIS_TASK_EXPIRES
    )


def document_analysis_queue(session_id: str, image: bytes) -> None:
    document_analyse.apply_async(args=[session_id, _encode(image)], expires=ANALYSIS_TASK_EXPIRES)
