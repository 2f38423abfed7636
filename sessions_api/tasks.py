"""Celery shells around session services."""
from celery import shared_task

from .state_machine import sessions_expire_due as _sessions_expire_due


@shared_task(name="sessions_api.tasks.sessions_expire_due")
def sessions_expire_due() -> int:
    return _sessions_expire_due()
