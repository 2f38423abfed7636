"""Writes on pipeline health: record that a queue's worker is alive."""

from django.utils import timezone

from .models import WorkerHeartbeat


def worker_heartbeat_record(*, queue: str, worker: str) -> None:
    WorkerHeartbeat.objects.update_or_create(queue=queue, defaults={"beat_at": timezone.now(), "worker": worker})
