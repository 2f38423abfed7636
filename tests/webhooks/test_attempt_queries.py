"""An attempt's database work on PostgreSQL: two statements, its claim and its record."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.support.webhooks import delivery_of, finalize_with_webhook
from webhooks.delivery import webhook_delivery_attempt_in_share
from webhooks.models import WebhookDelivery


def test_an_attempt_queued_with_its_tenant_makes_two_queries(api, receiver):
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))
    with CaptureQueriesContext(connection) as queries:
        result = webhook_delivery_attempt_in_share(delivery_id=delivery.id, tenant_id=delivery.tenant_id)
    assert result.status_code == 200
    assert len(queries) == 2, [query["sql"] for query in queries]
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt_count) == ("delivered", 1)
    assert [(a.number, a.status_code, a.response_excerpt) for a in delivery.attempts.all()] == [(1, 200, "ok")]


def test_an_attempt_queued_without_its_tenant_looks_it_up_and_is_made(api, receiver):
    # Messages queued before the tenant travelled with them are still delivered.
    delivery = delivery_of(finalize_with_webhook(api, receiver.url()))
    with CaptureQueriesContext(connection) as queries:
        result = webhook_delivery_attempt_in_share(delivery_id=delivery.id)
    assert result.status_code == 200 and len(queries) == 3
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == "delivered"


def test_an_attempt_of_an_unknown_delivery_does_nothing(db):
    assert webhook_delivery_attempt_in_share(delivery_id="msg_unknown") is None
    assert webhook_delivery_attempt_in_share(delivery_id="msg_unknown", tenant_id="ten_unknown") is None


def test_claim_and_record_find_the_delivery_by_its_id_after_a_quiet_spell(api, receiver):
    # PostgreSQL plans with the statistics of the last ANALYZE. Taken when nothing was pending, they
    # make "pending" look like one row, and a statement filtered on id and status was planned on the
    # due-deliveries index: in the burst that follows, every claim and every record read all the
    # pending rows (5,000 of them: 5,000 rows for each attempt). Whatever the statistics, both must
    # reach the row by its primary key.
    from datetime import timedelta

    from django.utils import timezone

    from webhooks import attempt_sql

    first = delivery_of(finalize_with_webhook(api, receiver.url()))
    now = timezone.now()

    def deliveries(prefix: str, count: int, **fields):
        WebhookDelivery.objects.bulk_create(
            WebhookDelivery(
                id=f"msg_{prefix}{n:05d}",
                tenant_id=first.tenant_id,
                url=first.url,
                event_type=first.event_type,
                payload=first.payload,
                mode=first.mode,
                **fields,
            )
            for n in range(count)
        )

    deliveries("past", 20000, status="delivered", delivered_at=now, next_attempt_at=None)
    WebhookDelivery.objects.filter(pk=first.pk).update(status="delivered")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE webhooks_webhookdelivery")
    deliveries("burst", 5000, next_attempt_at=now - timedelta(seconds=1))

    statements = {
        "claim": (attempt_sql._CLAIM, ["msg_burst00077", now, "lost", now, now, True]),
        "record": (
            attempt_sql._RECORD,
            [200, 5, "", "ok", "msg_burst00077", 1, True, "msg_burst00077", "delivered", now, None, True, 1, 1],
        ),
    }
    for name, (sql, params) in statements.items():
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN " + sql, params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "delivery_due_idx" not in plan, (name, plan)

    # A drain's claim of its tenant's next delivery reads the pending deliveries' own index.
    with connection.cursor() as cursor:
        cursor.execute(
            "EXPLAIN " + attempt_sql._CLAIM_NEXT_OF_TENANT, [first.tenant_id, now, now, "lost", now, now, True]
        )
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "delivery_tenant_due_idx" in plan, plan


def test_an_attempts_writes_pay_for_no_index_that_duplicates_another(db):
    # Every attempt updates its delivery twice and inserts an attempt: each index is written each time.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, indexname FROM pg_indexes WHERE tablename IN "
            "('webhooks_webhookdelivery', 'webhooks_webhookattempt') ORDER BY 1, 2"
        )
        indexes = cursor.fetchall()
    names = [name for _, name in indexes]
    assert not [name for name in names if name.endswith("_like")], names
    attempt_indexes = [name for table, name in indexes if table == "webhooks_webhookattempt"]
    assert sorted(attempt_indexes) == ["attempt_unique_number", "webhooks_webhookattempt_pkey"]
