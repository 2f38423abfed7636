"""Reads on webhooks: a tenant's deliveries and their attempt logs, for the dashboard and the admin."""
import re

from django.db.models import QuerySet

from tenants.models import Tenant

from .models import WebhookDelivery

# `msg_` + a ULID. Anything else is answered without a query: a NUL byte in an id from a URL would
# otherwise reach PostgreSQL, which refuses it in text with an error.
_DELIVERY_ID = re.compile(r"msg_[0-9A-HJKMNP-TV-Z]{26}")


def deliveries_for_tenant(*, tenant: Tenant) -> QuerySet[WebhookDelivery]:
    """Newest first, with attempts prefetched (each delivery's log in attempt order)."""
    return WebhookDelivery.objects.filter(tenant=tenant).prefetch_related("attempts")


def deliveries_for_subject(*, tenant: Tenant, subject_ref: str) -> QuerySet[WebhookDelivery]:
    """The deliveries about one thing (e.g. one session id) of one tenant, newest first, attempts prefetched."""
    return deliveries_for_tenant(tenant=tenant).filter(subject_ref=subject_ref)


def delivery_get(*, tenant: Tenant, delivery_id: str) -> WebhookDelivery | None:
    """One delivery of this tenant, or None (another tenant's id, or no id at all, reads as unknown)."""
    if not _DELIVERY_ID.fullmatch(delivery_id):
        return None
    return deliveries_for_tenant(tenant=tenant).filter(pk=delivery_id).first()
