"""Writes on webhooks: enqueue an event (the outbox), re-send a delivery, the sweep that re-queues due ones,
a tenant's default notification addresses, its optional events, the test event, and the erasure of a
subject's deliveries.

What a person or a command asks for (a re-send, an address, the events, a test) takes an `actor` and is
recorded in the tenant's audit log in the same transaction; what the service does by itself is not."""

import json
from collections.abc import Callable, Iterable
from datetime import timedelta

import redis
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.broker_epoch import broker_epoch
from core.redis_outage import redis_failure_note, redis_recently_failed
from tenants.audit import Actor, audit_record
from tenants.models import AuditLogEntry, Tenant

from .drains import dead_drains_release, drain_wake
from .models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from .queueing import queue_attempt
from .selectors import default_notification_url


def delivery_enqueue(
    *, tenant: Tenant, url: str, event_type: str, payload: bytes, mode: str, subject_ref: str = ""
) -> WebhookDelivery:
    """Write the delivery row in the caller's transaction; the first attempt is queued once it commits.

    If the commit happens but the broker is unreachable, the periodic sweep finds the row still due.
    """
    delivery = WebhookDelivery.objects.create(
        tenant=tenant,
        url=url,
        event_type=event_type,
        payload=payload.decode(),
        mode=mode,
        subject_ref=subject_ref,
        queued_at=timezone.now(),
    )
    transaction.on_commit(lambda: _queue_or_leave_to_sweep(delivery.pk, tenant.pk))
    return delivery


def _queue_or_leave_to_sweep(delivery_id: str, tenant_id: str) -> None:
    # Marked queued when written, so a busy worker's backlog is not doubled by the sweep; if the
    # publish fails, the mark goes, and the next sweep (within 5 s) queues it. A drain of the tenant
    # sends it if one can be woken (webhooks.drains), else it is queued alone.
    if drain_wake(tenant_id):
        return
    if not queue_attempt(delivery_id, tenant_id=tenant_id):
        WebhookDelivery.objects.filter(pk=delivery_id).update(queued_at=None)


def _attempt_in_flight(delivery: WebhookDelivery, now) -> bool:
    if delivery.next_attempt_at is None or delivery.next_attempt_at <= now:
        return False
    return WebhookAttempt.objects.filter(
        delivery=delivery, number=delivery.attempt_count, status_code__isnull=True, latency_ms__isnull=True, error=""
    ).exists()


@transaction.atomic
def delivery_resend(*, delivery: WebhookDelivery, actor: Actor) -> WebhookDelivery:
    """Send a delivery again now, with the same `webhook-id` and body, and a fresh retry schedule.

    Works on delivered, failed and pending deliveries; attempts keep their log and go on numbering.
    A delivery whose attempt is in flight at this moment is left alone (that attempt decides).
    """
    now = timezone.now()
    locked = WebhookDelivery.objects.select_for_update().select_related("tenant").get(pk=delivery.pk)
    audit_record(
        tenant=locked.tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_RESENT,
        target_type="webhook_delivery",
        target_id=locked.pk,
        target_label=f"{locked.event_type} {locked.subject_ref}".strip(),
        extra={"original": locked.pk, "url": locked.url},
    )
    if locked.status == WebhookDelivery.Status.PENDING and _attempt_in_flight(locked, now):
        return locked
    locked.status = WebhookDelivery.Status.PENDING
    locked.next_attempt_at = now
    locked.delivered_at = None
    locked.queued_at = now
    locked.cycle_first_attempt = locked.attempt_count + 1
    locked.save(update_fields=["status", "next_attempt_at", "delivered_at", "queued_at", "cycle_first_attempt"])
    transaction.on_commit(lambda: _queue_or_leave_to_sweep(locked.pk, locked.tenant_id))
    return locked


def webhook_deliveries_sweep(*, batch_size: int = 500) -> int:
    """Queue every pending delivery that is due and not recently queued; returns how many were queued.

    This is what makes the outbox lossless: a publish lost to a broker outage, a worker killed
    mid-attempt (its lease runs out) and long retry waits all end up here. SKIP LOCKED lets several
    sweeps and claims run at once without waiting on each other's rows. A delivery queued before the
    broker's current epoch began (core.broker_epoch: Redis came back empty since) is queued again at
    once: its task, or the drain that was to take it, went with the old Redis.
    """
    dead_drains_release()  # a killed worker's drains: the tenant's deliveries get a new one now
    now = timezone.now()
    requeue_before = now - timedelta(seconds=settings.WEBHOOK_REQUEUE_AFTER_SECONDS)
    lost_with_the_broker = _queued_in_a_lost_broker()
    with transaction.atomic():
        due = list(
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now)
            .filter(Q(queued_at__isnull=True) | Q(queued_at__lte=requeue_before) | lost_with_the_broker)
            .order_by("next_attempt_at")
            .values_list("pk", "tenant_id")[:batch_size]
        )
        due_ids = [delivery_id for delivery_id, _ in due]
        WebhookDelivery.objects.filter(pk__in=due_ids).update(queued_at=now)
    for index, (delivery_id, tenant_id) in enumerate(due):
        if not queue_attempt(delivery_id, tenant_id=tenant_id):
            # The broker is down: let the next sweep pick the rest up at once, not after the requeue wait.
            WebhookDelivery.objects.filter(pk__in=due_ids[index:]).update(queued_at=None)
            return index
    return len(due_ids)


def _queued_in_a_lost_broker() -> Q:
    if redis_recently_failed():
        return Q(pk__in=[])
    try:
        epoch = broker_epoch()
    except redis.RedisError:  # the broker is down: the queueing below fails too, and the next sweep looks again
        redis_failure_note()
        return Q(pk__in=[])
    return Q(queued_at__lt=epoch.began) if epoch is not None else Q(pk__in=[])


TEST_EVENT = "webhook.test"


@transaction.atomic
def webhook_endpoint_set(*, tenant: Tenant, mode: str, url: str, actor: Actor) -> None:
    """Set (or, with an empty `url`, remove) the tenant's default notification address for `mode`."""
    previous = default_notification_url(tenant=tenant, mode=mode)
    if url == previous:
        return
    if url:
        WebhookEndpoint.objects.update_or_create(tenant=tenant, mode=mode, defaults={"url": url})
    else:
        WebhookEndpoint.objects.filter(tenant=tenant, mode=mode).delete()
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_ADDRESS_CHANGED,
        target_type="webhook_address",
        target_id=mode,
        target_label=url or "(none)",
        extra={"mode": mode, "previous_address": previous or None},
    )


@transaction.atomic
def webhook_events_set(*, tenant: Tenant, mode: str, events: list[str], actor: Actor) -> None:
    """Choose the optional events sent for `mode`, besides verification.completed (always sent)."""
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    chosen = dict(tenant.webhook_extra_events or {})
    previous = sorted(chosen.get(mode, []))
    events = sorted(set(events))
    if events == previous:
        return
    chosen[mode] = events
    Tenant.objects.filter(pk=tenant.pk).update(webhook_extra_events=chosen)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_EVENTS_CHANGED,
        target_type="webhook_events",
        target_id=mode,
        target_label=", ".join(events) or "(verification.completed only)",
        extra={"mode": mode, "events": events, "previous_events": previous},
    )


def test_event_payload(*, mode: str) -> bytes:
    """A `webhook.test` event: signed and sent like any other, marked as a test, about no session."""
    body = {
        "event": TEST_EVENT,
        "timestamp": timezone.now().isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "data": {
            "test": True,
            "mode": mode,
            "message": "A test event sent from the AgeVerify dashboard. It is about no session.",
        },
    }
    return json.dumps(body, separators=(",", ":")).encode()


@transaction.atomic
def webhook_test_send(
    *, tenant: Tenant, mode: str, url: str, actor: Actor, event_type: str = TEST_EVENT, payload: bytes | None = None
) -> WebhookDelivery:
    """Queue a test event to `url`, signed with `mode`'s secrets; its attempts are logged as any other's.

    By default `webhook.test`; the caller may send a sample of another event instead (its `payload`).
    """
    if payload is None:
        payload = test_event_payload(mode=mode)
    delivery = delivery_enqueue(tenant=tenant, url=url, event_type=event_type, payload=payload, mode=mode)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_TEST_SENT,
        target_type="webhook_delivery",
        target_id=delivery.pk,
        target_label=delivery.event_type,
        extra={"mode": mode, "url": url},
    )
    return delivery


def subjects_with_pending_deliveries_lock(*, tenant: Tenant, subject_refs: Iterable[str]) -> set[str]:
    """Lock the deliveries about these subjects (in the caller's transaction); the subjects with one still pending.

    A delivery re-sent since the caller last looked is found here, locked, so its subject is kept until it ends.
    """
    deliveries = WebhookDelivery.objects.select_for_update().filter(tenant=tenant, subject_ref__in=subject_refs)
    return {ref for ref, status in deliveries.values_list("subject_ref", "status") if status == "pending"}


def subject_deliveries_erase(*, tenant: Tenant, subject_refs: Iterable[str], scrub: Callable[[str], str]) -> None:
    """Erase what the deliveries about these subjects hold (a redaction, the retention purge), in the caller's
    transaction: ended deliveries are deleted; a pending one is still owed, and is sent as `scrub` rewrites it."""
    deliveries = WebhookDelivery.objects.filter(tenant=tenant, subject_ref__in=subject_refs)
    deliveries.exclude(status=WebhookDelivery.Status.PENDING).delete()
    for delivery in deliveries:
        delivery.payload = scrub(delivery.payload)
        delivery.save(update_fields=["payload"])


def subject_deliveries_delete(*, tenant: Tenant, subject_refs: Iterable[str]) -> None:
    """Delete every delivery about these subjects, with their attempts (the subjects themselves are deleted)."""
    WebhookDelivery.objects.filter(tenant=tenant, subject_ref__in=subject_refs).delete()
