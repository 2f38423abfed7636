"""Operators' admin for webhook deliveries and their attempts, with a re-send action."""

import datetime

from django.contrib import admin, messages

from tenants.admin_lookups import SecretColumnsNotFilterable
from tenants.audit import Actor

from .models import WebhookAttempt, WebhookDelivery
from .services import delivery_resend


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    extra = 0
    can_delete = False
    fields = ("number", "attempted", "status_code", "latency_ms", "error", "response_excerpt")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False

    @admin.display(description="attempted at (UTC)")
    def attempted(self, attempt):
        # Retries can be seconds apart: the default date format would hide that.
        return attempt.attempted_at.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(SecretColumnsNotFilterable):
    list_display = (
        "id",
        "tenant",
        "event_type",
        "subject_ref",
        "status",
        "attempt_count",
        "next_attempt_at",
        "created_at",
    )
    list_filter = ("status", "event_type")
    list_select_related = ("tenant",)
    search_fields = ("id", "subject_ref", "tenant__name", "tenant__id", "url")
    readonly_fields = (
        "id",
        "tenant",
        "event_type",
        "url",
        "payload",
        "subject_ref",
        "status",
        "attempt_count",
        "cycle_first_attempt",
        "next_attempt_at",
        "queued_at",
        "created_at",
        "delivered_at",
    )
    inlines = [WebhookAttemptInline]
    actions = ["resend"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        # A deleted pending delivery would be an event lost; deliveries leave with their session's retention.
        return False

    @admin.action(description="Re-send selected deliveries now (same webhook-id)")
    def resend(self, request, queryset):
        count = 0
        for delivery in queryset:
            delivery_resend(delivery=delivery, actor=Actor.operator(request))
            self.log_change(request, delivery, "Re-sent the delivery.")  # actions leave no admin log of their own
            count += 1
        messages.success(request, f"{count} deliver{'y' if count == 1 else 'ies'} queued to be sent again.")
