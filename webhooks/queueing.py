"""Putting webhook work on the Celery queue: one delivery's attempt, or a drain of a tenant's deliveries.

The tasks are named by their registered names, not imported: webhooks.tasks is the thin shell that
calls delivery, drains and services, and they queue its tasks through here, so the imports run one
way (tasks -> delivery, drains, services -> queueing). Looked up in the app's registry, a task still
runs in place where tasks are eager (a development setting).
"""

import logging

from celery import current_app

from core.redis_outage import redis_failure_note, redis_recently_failed

logger = logging.getLogger(__name__)

ATTEMPT_TASK = "webhooks.tasks.webhook_delivery_attempt_task"
DRAIN_TASK = "webhooks.tasks.webhook_tenant_drain_task"


def queue_attempt(delivery_id: str, *, tenant_id: str, countdown: float | None = None, deferrals: int = 0) -> bool:
    """Put one attempt on the Celery queue; False if the broker is unreachable (the sweep will catch up).

    `tenant_id` travels with it, so the worker knows whose share the attempt takes without a query.
    `deferrals` counts how often the attempt was put back because its tenant's share of a worker was busy.
    """
    if redis_recently_failed():  # Redis just failed: do not make this request wait on it again
        return False
    kwargs = {"tenant_id": tenant_id, **({"deferrals": deferrals} if deferrals else {})}
    try:
        current_app.tasks[ATTEMPT_TASK].apply_async((delivery_id,), kwargs, countdown=countdown)
    except Exception as exc:  # any broker failure: the row is committed and still due, nothing is lost
        redis_failure_note()
        logger.warning("could not queue webhook %s (%s); the sweep will retry", delivery_id, exc)
        return False
    return True


def queue_drain(tenant_id: str, token: str, *, countdown: float | None = None, deferrals: int = 0) -> bool:
    """Put a drain of the tenant's deliveries (webhooks.drains) on the queue; False if the broker failed."""
    kwargs = {"deferrals": deferrals} if deferrals else {}
    try:
        current_app.tasks[DRAIN_TASK].apply_async((tenant_id, token), kwargs, countdown=countdown)
    except Exception as error:  # any broker failure: the deliveries are still due, the sweep queues them
        redis_failure_note()
        logger.warning("could not queue a webhook drain of tenant %s (%s); the sweep will", tenant_id, error)
        return False
    return True
