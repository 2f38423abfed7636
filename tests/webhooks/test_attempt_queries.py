"""An attempt's database work on PostgreSQL: two statements, its claim and its record."""
from django.db import connection
from django.test.utils import CaptureQueriesContext

from webhooks.delivery import webhook_delivery_attempt_in_share
from webhooks.models import WebhookDelivery

from tests.support.webhooks import delivery_of, finalize_with_webhook


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
