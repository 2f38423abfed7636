"""Celery shells around webhook delivery services (queued by name through webhooks.queueing)."""

from celery import shared_task

from .delivery import webhook_delivery_attempt_in_share
from .drains import webhook_tenant_drain
from .services import webhook_deliveries_sweep as sweep


@shared_task(name="webhooks.tasks.webhook_delivery_attempt_task", ignore_result=True)
def webhook_delivery_attempt_task(delivery_id: str, deferrals: int = 0, tenant_id: str | None = None) -> None:
    webhook_delivery_attempt_in_share(delivery_id=delivery_id, tenant_id=tenant_id, deferrals=deferrals)


@shared_task(name="webhooks.tasks.webhook_deliveries_sweep", ignore_result=True)
def webhook_deliveries_sweep() -> int:
    return sweep()


@shared_task(name="webhooks.tasks.webhook_tenant_drain_task", ignore_result=True)
def webhook_tenant_drain_task(tenant_id: str, token: str, deferrals: int = 0) -> None:
    webhook_tenant_drain(tenant_id=tenant_id, token=token, deferrals=deferrals)
