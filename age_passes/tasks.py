"""Celery tasks of age passes: the retention purge of expired passes (a thin shell over the service)."""

from celery import shared_task

from .services import age_passes_purge as _age_passes_purge


@shared_task(name="age_passes.tasks.age_passes_purge")
def age_passes_purge() -> int:
    return _age_passes_purge()
