"""Celery shells around webhook delivery services."""
from celery import shared_task


@shared_task(name="webhooks.tasks.webhook_delivery_attempt_task")
def webhook_delivery_attempt_task(delivery_id: str) -> None:
    from .delivery import webhook_delivery_attempt

    webhook_delivery_attempt(delivery_id=delivery_id)
