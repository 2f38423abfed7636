"""Celery shells around webhook delivery services."""

from celery import shared_task


@shared_task(name="webhooks.tasks.webhook_delivery_attempt_task", ignore_result=True)
def webhook_delivery_attempt_task(delivery_id: str, deferrals: int = 0, tenant_id: str | None = None) -> None:
    from .delivery import webhook_delivery_attempt_in_share

    webhook_delivery_attempt_in_share(delivery_id=delivery_id, tenant_id=tenant_id, deferrals=deferrals)


@shared_task(name="webhooks.tasks.webhook_deliveries_sweep", ignore_result=True)
def webhook_deliveries_sweep() -> int:
    from .services import webhook_deliveries_sweep as sweep

    return sweep()


@shared_task(name="webhooks.tasks.webhook_tenant_drain_task", ignore_result=True)
def webhook_tenant_drain_task(tenant_id: str, token: str, deferrals: int = 0) -> None:
    from .drains import webhook_tenant_drain

    webhook_tenant_drain(tenant_id=tenant_id, token=token, deferrals=deferrals)
