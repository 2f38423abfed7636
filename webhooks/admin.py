"""Operators' admin for webhook deliveries and their attempts."""
from django.contrib import admin

from .models import WebhookAttempt, WebhookDelivery


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    extra = 0
    can_delete = False
    fields = ("number", "attempted_at", "status_code", "latency_ms", "error", "response_excerpt")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ("id", "tenant", "event_type", "subject_ref", "status", "attempt_count", "next_attempt_at", "created_at")
    list_filter = ("status", "event_type")
    search_fields = ("id", "subject_ref", "tenant__name", "url")
    readonly_fields = ("id", "tenant", "event_type", "url", "payload", "subject_ref", "status", "attempt_count",
                       "next_attempt_at", "created_at", "delivered_at")
    inlines = [WebhookAttemptInline]

    def has_add_permission(self, request):
        return False
