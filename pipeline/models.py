"""The last heartbeat each Celery queue's workers answered (written by a task that beat sends to that queue)."""

from django.db import models


class WorkerHeartbeat(models.Model):
    queue = models.CharField(primary_key=True, max_length=50)
    beat_at = models.DateTimeField()
    worker = models.CharField(max_length=255, blank=True)

    def __str__(self):
        return f"{self.queue} at {self.beat_at:%Y-%m-%d %H:%M:%S}"
