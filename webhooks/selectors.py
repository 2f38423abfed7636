"""Reads on webhooks: deliveries and attempt logs, the pending ones about a subject, a delivery's tenant (workers)."""

from django.db.models import QuerySet

from core.identifiers import is_prefixed_ulid
from tenants.models import Tenant

from .models import WebhookDelivery, WebhookEndpoint


def deliveries_for_tenant(*, tenant: Tenant) -> QuerySet[WebhookDelivery]:
    """Newest first, with attempts prefetched (each delivery's log in attempt order)."""
    return WebhookDelivery.objects.filter(tenant=tenant).prefetch_related("attempts")


def deliveries_for_subject(*, tenant: Tenant, subject_ref: str) -> QuerySet[WebhookDelivery]:
    """The deliveries about one thing (e.g. one session id) of one tenant, newest first, attempts prefetched."""
    return deliveries_for_tenant(tenant=tenant).filter(subject_ref=subject_ref)


def pending_deliveries_for_subject(*, tenant: Tenant, subject_ref) -> QuerySet[WebhookDelivery]:
    """The deliveries about one thing not yet ended; `subject_ref` may be an OuterRef (an Exists() subquery)."""
    return WebhookDelivery.objects.filter(tenant=tenant, subject_ref=subject_ref, status=WebhookDelivery.Status.PENDING)


def delivery_get(*, tenant: Tenant, delivery_id: str) -> WebhookDelivery | None:
    """One delivery of this tenant, or None (another tenant's id, or no id at all, reads as unknown)."""
    if not is_prefixed_ulid(delivery_id, "msg"):
        return None
    return deliveries_for_tenant(tenant=tenant).filter(pk=delivery_id).first()


def delivery_tenant_id(delivery_id: str) -> str | None:
    """Whose delivery this is, for the worker's per-tenant share; None if there is no such delivery."""
    return WebhookDelivery.objects.filter(pk=delivery_id).values_list("tenant_id", flat=True).first()


def default_notification_url(*, tenant: Tenant, mode: str) -> str:
    """The tenant's default address for `mode`'s events, or "" when it has set none."""
    return WebhookEndpoint.objects.filter(tenant=tenant, mode=mode).values_list("url", flat=True).first() or ""
