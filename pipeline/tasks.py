"""Celery shell around the heartbeat: beat sends one to each queue, so its age shows whether that queue is served."""

from celery import shared_task

from .services import worker_heartbeat_record


@shared_task(name="pipeline.tasks.worker_heartbeat", bind=True)
def worker_heartbeat(self, queue: str) -> None:
    worker_heartbeat_record(queue=queue, worker=self.request.hostname or "")
