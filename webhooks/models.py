"""WebhookDelivery (one event to one URL, the outbox row) and WebhookAttempt (one HTTP try of it)."""

from django.db import models
from django.utils import timezone

from core.identifiers import prefixed_ulid
from tenants.models import Tenant


def new_message_id() -> str:
    return prefixed_ulid("msg")


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    # The Standard Webhooks `webhook-id`: stable across every attempt of this event.
    id = models.CharField(primary_key=True, max_length=30, default=new_message_id, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="webhook_deliveries")
    event_type = models.CharField(max_length=100)
    # live | test: which of the tenant's signing secrets signs this event (test events never get the live one).
    mode = models.CharField(max_length=4, default="live")
    url = models.URLField(max_length=2048)
    # The exact bytes sent (and signed) on every attempt, so retries are byte-identical.
    payload = models.TextField()
    # Free-form reference to what the event is about (e.g. a session id), for search and display only.
    subject_ref = models.CharField(max_length=100, blank=True, db_index=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempt_count = models.PositiveSmallIntegerField(default=0)
    # When the next attempt is due; while an attempt is in flight, the end of its lease (see delivery.py).
    next_attempt_at = models.DateTimeField(null=True, blank=True, default=timezone.now)
    # Number of the first attempt of the current retry schedule: 1, or the first one after a manual re-send.
    cycle_first_attempt = models.PositiveSmallIntegerField(default=1)
    # When the sweep last put this delivery on the queue, so it is not queued again while still waiting there.
    queued_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due_idx"),
            # A tenant's drain takes its oldest due delivery (webhooks.drains): only pending rows are indexed.
            models.Index(
                fields=["tenant", "next_attempt_at"],
                condition=models.Q(status="pending"),
                name="delivery_tenant_due_idx",
            ),
        ]

    def __str__(self):
        return f"{self.event_type} {self.id} ({self.status})"


class WebhookAttempt(models.Model):
    # No index of its own: attempt_unique_number (delivery, number) leads with it.
    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts", db_index=False)
    number = models.PositiveSmallIntegerField()
    attempted_at = models.DateTimeField(default=timezone.now)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    response_excerpt = models.TextField(blank=True, help_text="First 1 KiB of the response body.")

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="attempt_unique_number")]

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class WebhookEndpoint(models.Model):
    """A tenant's default notification address for one mode: where a final session's webhook goes when the
    session was created without a `notification_url` (set in the dashboard's Webhooks page)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="webhook_endpoints")
    mode = models.CharField(max_length=4)  # live | test: the events it receives
    url = models.URLField(max_length=2048)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "mode"], name="webhook_endpoint_unique_mode")]

    def __str__(self):
        return f"{self.tenant_id} {self.mode}: {self.url}"
