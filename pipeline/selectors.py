"""Reads on pipeline health: heartbeat ages per queue, the oldest due delivery and the oldest waiting analysis."""

from dataclasses import dataclass

from django.conf import settings
from django.db.models import Min
from django.utils import timezone

from sessions_api.models import Mode, Status, VerificationSession
from webhooks.models import WebhookDelivery

from .models import WorkerHeartbeat


@dataclass(frozen=True)
class Check:
    name: str
    seconds: float | None  # age of what is measured; None when there is none (no heartbeat ever, no backlog)
    limit: float
    failing: bool
    late: bool = False  # over a warning threshold below the limit: the work goes on, but slower than it should

    def as_dict(self) -> dict:
        return {
            "seconds": None if self.seconds is None else round(self.seconds, 1),
            "limit": self.limit,
            "status": "failing" if self.failing else "late" if self.late else "ok",
        }


def _age(moment, now) -> float | None:
    return None if moment is None else max(0.0, (now - moment).total_seconds())


def pipeline_checks() -> list[Check]:
    """Each check fails above its threshold; a queue that never answered a heartbeat fails too."""
    now = timezone.now()
    beats = dict(WorkerHeartbeat.objects.values_list("queue", "beat_at"))
    checks = []
    for queue in settings.CELERY_TASK_QUEUES:
        age = _age(beats.get(queue), now)
        limit = settings.PIPELINE_HEARTBEAT_MAX_AGE
        checks.append(Check(f"heartbeat:{queue}", age, limit, age is None or age > limit))
    oldest_due = WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.PENDING,
        next_attempt_at__lte=now,
    ).aggregate(oldest=Min("next_attempt_at"))["oldest"]
    age = _age(oldest_due, now)
    checks.append(
        Check(
            "oldest_due_delivery",
            age,
            settings.PIPELINE_DELIVERY_MAX_LAG,
            age is not None and age > settings.PIPELINE_DELIVERY_MAX_LAG,
            late=age is not None and age > settings.PIPELINE_DELIVERY_LATE_AFTER,
        )
    )
    oldest_analysis = VerificationSession.objects.filter(
        status=Status.PROCESSING,
        mode=Mode.LIVE,
    ).aggregate(oldest=Min("updated_at"))["oldest"]
    age = _age(oldest_analysis, now)
    checks.append(
        Check(
            "oldest_waiting_analysis",
            age,
            settings.PIPELINE_ANALYSIS_MAX_WAIT,
            age is not None and age > settings.PIPELINE_ANALYSIS_MAX_WAIT,
        )
    )
    return checks


def pipeline_status() -> dict:
    """`failing` when a check fails, `degraded` when one is late (the work goes on, slower), else `ok`."""
    checks = pipeline_checks()
    if any(check.failing for check in checks):
        status = "failing"
    elif any(check.late for check in checks):
        status = "degraded"
    else:
        status = "ok"
    return {"status": status, "checks": {check.name: check.as_dict() for check in checks}}
