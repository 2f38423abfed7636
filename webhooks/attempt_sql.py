"""An attempt's claim and its record as one PostgreSQL statement each (the worker's hot path; see delivery.py).

Through the ORM an attempt took about sixteen round trips (a transaction of six statements to claim,
one of five to record, a health check) and milliseconds of SQL compilation. Here each is a single
prepared statement of data-modifying CTEs (core.hot_sql), which is its own transaction and its
own connection health check. Each is safe to run twice, which hot_sql does when a reused connection
turns out dead: a second claim finds the row leased and claims nothing (the lease's end lets the
sweep send it), a second record writes the same outcome again or finds the delivery already settled.
The claim comes in two forms: of a given delivery (a queued attempt's) and of a tenant's next due one
(a drain's, webhooks.drains).

`set_config('synchronous_commit', 'off', true)` inside the statement applies to the transaction the
statement is, so its commit does not wait for the disk, as delivery.py explains; inside a caller's
transaction (a test's) the setting is left as it is, or it would cover the caller's writes too.
"""

from datetime import datetime

from django.db import DEFAULT_DB_ALIAS, connections

from core.hot_sql import fetch_one
from tenants.models import Tenant

from .models import WebhookDelivery

_NO_COMMIT_WAIT = (
    "set_config('synchronous_commit', CASE WHEN %s THEN 'off' ELSE current_setting('synchronous_commit') END, true)"
)

# The claim of a given delivery and the record reach it by its id alone, in a MATERIALIZED step planned
# on its own, and test its status on the row they hold: with status in the same WHERE clause, PostgreSQL could plan on
# the due-deliveries index (statistics taken when nothing was pending make "pending" look like one
# row) and, in the burst that follows, read every pending row for each attempt.
_BY_ID = """
    SELECT id, status, next_attempt_at FROM webhooks_webhookdelivery
    WHERE id = %s
    FOR UPDATE SKIP LOCKED"""
# A tenant's drain (webhooks.drains) takes its oldest due delivery that nobody holds, on the pending
# deliveries' own partial index (delivery_tenant_due_idx).
_NEXT_OF_TENANT = """
    SELECT id, status, next_attempt_at FROM webhooks_webhookdelivery
    WHERE tenant_id = %s AND status = 'pending' AND next_attempt_at <= %s
    ORDER BY next_attempt_at
    LIMIT 1
    FOR UPDATE SKIP LOCKED"""

_CLAIM_OF = """
WITH held AS MATERIALIZED ({held}
), due AS (
    SELECT id FROM held WHERE status = 'pending' AND next_attempt_at <= %s
), lost AS (
    UPDATE webhooks_webhookattempt SET error = %s
    WHERE delivery_id = (SELECT id FROM due) AND status_code IS NULL AND latency_ms IS NULL AND error = ''
), claimed AS (
    UPDATE webhooks_webhookdelivery AS d
    SET attempt_count = d.attempt_count + 1, next_attempt_at = %s, queued_at = NULL
    FROM due WHERE d.id = due.id
    RETURNING d.id, d.tenant_id, d.url, d.payload, d.mode, d.attempt_count, d.cycle_first_attempt
), attempt AS (
    INSERT INTO webhooks_webhookattempt (delivery_id, number, attempted_at, error, response_excerpt)
    SELECT id, attempt_count, %s, '', '' FROM claimed
)
SELECT c.id, c.tenant_id, c.url, c.payload, c.mode, c.attempt_count, c.cycle_first_attempt, t.webhooks_enabled,
       t.webhook_secret, t.webhook_secret_previous, t.webhook_secret_previous_expires_at,
       t.test_webhook_secret, t.test_webhook_secret_previous, t.test_webhook_secret_previous_expires_at,
       {no_commit_wait}
FROM claimed AS c JOIN tenants_tenant AS t ON t.id = c.tenant_id
"""
_CLAIM = _CLAIM_OF.format(held=_BY_ID, no_commit_wait=_NO_COMMIT_WAIT)
_CLAIM_NEXT_OF_TENANT = _CLAIM_OF.format(held=_NEXT_OF_TENANT, no_commit_wait=_NO_COMMIT_WAIT)

_TENANT_FIELDS = (
    "webhooks_enabled",
    "webhook_secret",
    "webhook_secret_previous",
    "webhook_secret_previous_expires_at",
    "test_webhook_secret",
    "test_webhook_secret_previous",
    "test_webhook_secret_previous_expires_at",
)

# The outcome of a failed attempt counts only if it is still the latest attempt of the same retry cycle:
# after a lease ran out, a later attempt decides; after a re-send, the delivery is already due again.
_RECORD = f"""
WITH outcome AS (
    UPDATE webhooks_webhookattempt
    SET status_code = %s, latency_ms = %s, error = %s, response_excerpt = %s
    WHERE delivery_id = %s AND number = %s
    RETURNING {_NO_COMMIT_WAIT}
), held AS MATERIALIZED (
    SELECT id, status, attempt_count, cycle_first_attempt FROM webhooks_webhookdelivery
    WHERE id = %s
    FOR UPDATE
)
UPDATE webhooks_webhookdelivery AS d
SET status = %s, delivered_at = COALESCE(%s, d.delivered_at), next_attempt_at = %s
FROM outcome, held
WHERE d.id = held.id AND held.status = 'pending'
  AND (%s OR (held.attempt_count = %s AND held.cycle_first_attempt = %s))
RETURNING d.id
"""


def _commit_without_wait() -> bool:
    return not connections[DEFAULT_DB_ALIAS].in_atomic_block


def attempt_claim(*, delivery_id: str, now: datetime, lease_end: datetime, lost_error: str) -> WebhookDelivery | None:
    """Claim the next attempt of a due, unclaimed delivery: the delivery (its tenant loaded) with
    `attempt_count` its number, or None when there is nothing to claim."""
    return _claimed(fetch_one(_CLAIM, [delivery_id, now, lost_error, lease_end, now, _commit_without_wait()]))


def attempt_claim_next_of_tenant(
    *, tenant_id: str, now: datetime, lease_end: datetime, lost_error: str
) -> WebhookDelivery | None:
    """As attempt_claim, for the tenant's oldest due delivery that no other attempt holds; None when none is."""
    return _claimed(
        fetch_one(_CLAIM_NEXT_OF_TENANT, [tenant_id, now, now, lost_error, lease_end, now, _commit_without_wait()])
    )


def _claimed(row) -> WebhookDelivery | None:
    if row is None:
        return None
    delivery_id, tenant_id, url, payload, mode, number, cycle_first_attempt, *tenant_values, _ = row
    delivery = _loaded(
        WebhookDelivery,
        {
            "id": delivery_id,
            "tenant_id": tenant_id,
            "url": url,
            "payload": payload,
            "mode": mode,
            "status": WebhookDelivery.Status.PENDING,
            "attempt_count": number,
            "cycle_first_attempt": cycle_first_attempt,
        },
    )
    delivery.tenant = _loaded(Tenant, {"id": tenant_id, **dict(zip(_TENANT_FIELDS, tenant_values))})
    return delivery


def _loaded(model, values: dict):
    """`model` as the ORM loads a row, the fields not in `values` deferred: built from keyword arguments
    it would evaluate every other field's default, a noticeable part of an attempt's CPU."""
    names = [field.attname for field in model._meta.concrete_fields if field.attname in values]
    return model.from_db(DEFAULT_DB_ALIAS, names, [values[name] for name in names])


def attempt_record(
    *,
    delivery: WebhookDelivery,
    number: int,
    status_code: int | None,
    latency_ms: int,
    error: str,
    response_excerpt: str,
    succeeded: bool,
    status: str,
    delivered_at: datetime | None,
    next_attempt_at: datetime | None,
) -> bool:
    """Write the attempt's outcome and the delivery's new state; False when the delivery's state was
    not this attempt's to decide (settled already, or a later attempt or a re-send came since)."""
    row = fetch_one(
        _RECORD,
        [
            status_code,
            latency_ms,
            error,
            response_excerpt,
            delivery.id,
            number,
            _commit_without_wait(),
            delivery.id,
            status,
            delivered_at,
            next_attempt_at,
            succeeded,
            number,
            delivery.cycle_first_attempt,
        ],
    )
    return row is not None
