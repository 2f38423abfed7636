"""One attempt of a webhook delivery: claim it under a row lock, sign and send it, record the outcome.

Claim and record are two short transactions around the HTTP call, never one long one: no row lock
or database connection is held while a partner's server is slow. The claim moves `next_attempt_at`
to the end of a lease, so neither a second run of the same task nor the sweep sends while an
attempt is in flight. If the worker dies between sending and recording, the lease runs out and the
sweep sends again: delivery is at-least-once, and receivers de-duplicate by `webhook-id`.

For the same reason neither transaction waits for its commit to reach the disk (PostgreSQL's
`synchronous_commit = off`, for these two transactions only; a commit is still atomic and at once
visible to every other connection). A database crash can lose the last fraction of a second of them,
and what that loses is what a worker dying mid-attempt loses: a claim or an outcome, so the delivery
is attempted again. Nothing else is written this way; sessions and the outbox rows themselves are not.

A delivery's first attempt (and a re-send) is made by a drain of its tenant (webhooks.drains), which
claims the tenant's next due delivery instead of a given one; retries and the sweep queue a task for
the given delivery. Either way the attempt is this one.

On PostgreSQL each of the two is a single statement (webhooks.attempt_sql): one round trip each, the
whole of an attempt's database work. Elsewhere (SQLite in the demo) they are ORM transactions.
"""

import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from core.hot_sql import hot_sql_applies
from tenants.selectors import webhook_signing_secrets

from .attempt_sql import attempt_claim, attempt_claim_next_of_tenant, attempt_record
from .concurrency import deferral_countdown, tenant_slots
from .models import WebhookAttempt, WebhookDelivery
from .queueing import queue_attempt
from .selectors import delivery_tenant_id
from .signing import signature_header
from .transport import PostResult, https_post

logger = logging.getLogger(__name__)

USER_AGENT = "ageverify-webhooks/1"
# A retry due this soon is put on the queue with a countdown; later ones are left to the periodic sweep.
QUEUE_WITH_COUNTDOWN_UP_TO = timedelta(seconds=60)
DISABLED_ERROR = "not sent: webhook sending is disabled for this tenant"
LOST_ATTEMPT_ERROR = "no result recorded: the worker stopped during this attempt (it may have been received)"


def retry_delay(base_seconds: float, *, jitter: float | None = None, rng: random.Random | None = None) -> timedelta:
    """`base_seconds` spread by +-jitter (20 % by default), so retries after an outage do not arrive in step."""
    jitter = settings.WEBHOOK_RETRY_JITTER if jitter is None else jitter
    factor = (rng or random).uniform(1 - jitter, 1 + jitter)
    return timedelta(seconds=base_seconds * factor)


def next_retry_after(attempt_in_cycle: int) -> timedelta | None:
    """The wait after the n-th failed attempt of a cycle (1-based), or None when it was the last one."""
    schedule = settings.WEBHOOK_RETRY_SCHEDULE
    if attempt_in_cycle >= len(schedule):
        return None
    return retry_delay(schedule[attempt_in_cycle])


@dataclass(frozen=True)
class _Claim:
    delivery: WebhookDelivery
    number: int
    secrets: list[str]


def _claim(delivery_id: str) -> _Claim | None:
    now = timezone.now()
    lease_end = now + timedelta(seconds=settings.WEBHOOK_SEND_LEASE_SECONDS)
    if hot_sql_applies():
        return _hot_claim(
            attempt_claim(delivery_id=delivery_id, now=now, lease_end=lease_end, lost_error=LOST_ATTEMPT_ERROR)
        )
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .select_related("tenant")
            .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now)
            .first()
        )
        if delivery is None:  # delivered, failed, not yet due, in flight, or being claimed right now
            return None
        WebhookAttempt.objects.filter(
            delivery=delivery, status_code__isnull=True, latency_ms__isnull=True, error=""
        ).update(error=LOST_ATTEMPT_ERROR)
        number = delivery.attempt_count + 1
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            attempt_count=number, next_attempt_at=lease_end, queued_at=None
        )
        WebhookAttempt.objects.create(delivery=delivery, number=number, attempted_at=now)
        secrets = webhook_signing_secrets(delivery.tenant, delivery.mode)
    return _Claim(delivery=delivery, number=number, secrets=secrets)


def _hot_claim(delivery: WebhookDelivery | None) -> _Claim | None:
    if delivery is None:  # delivered, failed, not yet due, in flight, or being claimed right now
        return None
    return _Claim(
        delivery=delivery,
        number=delivery.attempt_count,
        secrets=webhook_signing_secrets(delivery.tenant, delivery.mode),
    )


def _send(claim: _Claim) -> PostResult:
    delivery = claim.delivery
    body = delivery.payload.encode()
    if not delivery.tenant.webhooks_enabled:
        # The operator's switch counts at every attempt, not only when the event was written: switched
        # off, retries and re-sends of events already in the outbox stop too (and resume if it is back on).
        return PostResult(status_code=None, latency_ms=0, error=DISABLED_ERROR)
    if not claim.secrets:
        return PostResult(status_code=None, latency_ms=0, error="not sent: the tenant has no webhook secret")
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": delivery.id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature_header(
            secrets=claim.secrets, msg_id=delivery.id, timestamp=timestamp, body=body
        ),
    }
    return https_post(
        delivery.url,
        body=body,
        headers=headers,
        connect_timeout=settings.WEBHOOK_CONNECT_TIMEOUT,
        total_timeout=settings.WEBHOOK_TOTAL_TIMEOUT,
        ca_bundle=settings.WEBHOOK_CA_BUNDLE,
    )


@dataclass(frozen=True)
class _Outcome:
    """What an attempt's result makes of its delivery; `retry_in` is set when another attempt follows."""

    status: str
    delivered_at: datetime | None
    next_attempt_at: datetime | None
    retry_in: timedelta | None = None


def _outcome(result: PostResult, *, number: int, cycle_first_attempt: int) -> _Outcome:
    now = timezone.now()
    if result.succeeded:
        return _Outcome(WebhookDelivery.Status.DELIVERED, now, None)
    wait = next_retry_after(number - cycle_first_attempt + 1)
    if wait is None:
        return _Outcome(WebhookDelivery.Status.FAILED, None, None)
    return _Outcome(WebhookDelivery.Status.PENDING, None, now + wait, retry_in=wait)


def _record(claim: _Claim, result: PostResult) -> None:
    if hot_sql_applies():
        outcome = _outcome(result, number=claim.number, cycle_first_attempt=claim.delivery.cycle_first_attempt)
        decided = attempt_record(
            delivery=claim.delivery,
            number=claim.number,
            status_code=result.status_code,
            latency_ms=result.latency_ms,
            error=result.error,
            response_excerpt=result.response_excerpt,
            succeeded=result.succeeded,
            status=outcome.status,
            delivered_at=outcome.delivered_at,
            next_attempt_at=outcome.next_attempt_at,
        )
        if decided:
            _queue_retry_soon(claim, outcome.retry_in)
        return
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().get(pk=claim.delivery.pk)
        WebhookAttempt.objects.filter(delivery=delivery, number=claim.number).update(
            status_code=result.status_code,
            latency_ms=result.latency_ms,
            error=result.error,
            response_excerpt=result.response_excerpt,
        )
        if delivery.status != WebhookDelivery.Status.PENDING:
            return
        if not result.succeeded and (
            delivery.attempt_count != claim.number or delivery.cycle_first_attempt != claim.delivery.cycle_first_attempt
        ):
            # As attempt_sql's record: a later attempt was claimed after this one's lease ran out (its
            # outcome decides), or the delivery was re-sent since (it is due again on a fresh schedule).
            return
        outcome = _outcome(result, number=claim.number, cycle_first_attempt=claim.delivery.cycle_first_attempt)
        delivery.status, delivery.next_attempt_at = outcome.status, outcome.next_attempt_at
        delivery.delivered_at = outcome.delivered_at or delivery.delivered_at
        delivery.save(update_fields=["status", "delivered_at", "next_attempt_at"])
        _queue_retry_soon(claim, outcome.retry_in)


def _queue_retry_soon(claim: _Claim, wait: timedelta | None) -> None:
    if wait is not None and wait <= QUEUE_WITH_COUNTDOWN_UP_TO:
        delivery = claim.delivery
        transaction.on_commit(
            lambda: queue_attempt(delivery.pk, tenant_id=delivery.tenant_id, countdown=wait.total_seconds())
        )


def webhook_delivery_attempt(*, delivery_id: str) -> PostResult | None:
    """Make the next attempt of a delivery if it is due; None when there was nothing to do.

    Safe to run any number of times, concurrently too: only the run that claims the row sends.
    """
    return _attempt(_claim(delivery_id))


def webhook_delivery_attempt_next_of_tenant(*, tenant_id: str) -> PostResult | None:
    """The attempt of the tenant's oldest due delivery that no other attempt holds; None when there is none.

    PostgreSQL only (hot_sql_applies): a tenant's drain (webhooks.drains) runs one after another.
    """
    now = timezone.now()
    lease_end = now + timedelta(seconds=settings.WEBHOOK_SEND_LEASE_SECONDS)
    return _attempt(
        _hot_claim(
            attempt_claim_next_of_tenant(
                tenant_id=tenant_id, now=now, lease_end=lease_end, lost_error=LOST_ATTEMPT_ERROR
            )
        )
    )


def _connection_back_to_pool() -> None:
    # With a connection pool (DATABASE_POOL_MAX_SIZE), the connection is given back while the receiver is
    # waited on: a worker's threads then share a few connections, each held for a claim or a record only.
    connection = connections[DEFAULT_DB_ALIAS]
    if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
        connection.close()


def _attempt(claim: _Claim | None) -> PostResult | None:
    if claim is None:
        return None
    _connection_back_to_pool()
    result = _send(claim)
    _record(claim, result)
    if not result.succeeded:
        logger.info(
            "webhook %s attempt %d failed: %s", claim.delivery.pk, claim.number, result.error or result.status_code
        )
    return result


def webhook_delivery_attempt_in_share(
    *, delivery_id: str, tenant_id: str | None = None, deferrals: int = 0
) -> PostResult | None:
    """The attempt, if the delivery's tenant has a free slot in this worker; else it goes back on the queue.

    `tenant_id` comes with the task (a query less per attempt); messages queued without it look it up.
    """
    tenant_id = tenant_id or delivery_tenant_id(delivery_id)
    if tenant_id is None:
        return None
    with tenant_slots.hold(tenant_id) as held:
        if held:
            return webhook_delivery_attempt(delivery_id=delivery_id)
    queue_attempt(delivery_id, tenant_id=tenant_id, countdown=deferral_countdown(deferrals), deferrals=deferrals + 1)
    return None
