"""Writes on webhooks: enqueue an event for delivery (the outbox), inside the caller's transaction."""
from django.db import transaction

from tenants.models import Tenant

from .models import WebhookDelivery


def delivery_enqueue(*, tenant: Tenant, url: str, event_type: str, payload: bytes, subject_ref: str = "") -> WebhookDelivery:
    """Write the delivery row in the caller's transaction; the first attempt is queued once it commits.

    If the commit happens but the broker is unreachable, the periodic sweep finds the row still due.
    """
    delivery = WebhookDelivery.objects.create(
        tenant=tenant, url=url, event_type=event_type, payload=payload.decode(), subject_ref=subject_ref
    )
    transaction.on_commit(lambda: _queue_attempt(delivery.pk))
    return delivery


def _queue_attempt(delivery_id: str) -> None:
    from .tasks import webhook_delivery_attempt_task

    try:
        webhook_delivery_attempt_task.delay(delivery_id)
    except Exception:  # broker down: the sweep re-queues it, nothing is lost
        import logging

        logging.getLogger(__name__).warning("could not queue webhook %s; the sweep will retry", delivery_id)
