"""Operators' admin for sessions: read-only, with results and history; status changes go through services."""

from django.contrib import admin

from tenants.admin_lookups import SecretColumnsNotFilterable

from .models import (
    AgeEstimationResult,
    DocumentResult,
    LivenessResult,
    SessionEvent,
    VerificationSession,
)


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class AgeEstimationInline(ReadOnlyInline):
    model = AgeEstimationResult


class LivenessInline(ReadOnlyInline):
    model = LivenessResult


class DocumentInline(ReadOnlyInline):
    model = DocumentResult


class SessionEventInline(ReadOnlyInline):
    model = SessionEvent
    fields = ("created_at", "from_status", "to_status", "reason", "cause")
    readonly_fields = fields


@admin.register(VerificationSession)
class VerificationSessionAdmin(SecretColumnsNotFilterable):
    list_display = ("id", "tenant", "mode", "subject", "age_limit", "status", "reason", "created_at", "expires_at")
    list_filter = ("status", "mode", "reason", "created_at")
    search_fields = ("id", "subject", "tenant__name", "tenant__id")
    date_hierarchy = "created_at"
    inlines = [AgeEstimationInline, LivenessInline, DocumentInline, SessionEventInline]
    exclude = ("token_hash", "evidence_seal")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        # Read-only means no delete either: sessions leave by the retention purge, which keeps the daily counts.
        return False


def age_policy_page(request):
    """Read-only: the calibrated age policy in force, its evidence, and whether it fits the running network."""
    from django.template.response import TemplateResponse

    from checks.age import age_network

    from .age_policy import age_policy

    policy = age_policy()
    rows = []
    for limit, entry in sorted(policy.document["limits"].items(), key=lambda item: int(item[0])):
        rows.append({"limit": int(limit), **entry})
    context = {
        **admin.site.each_context(request),
        "title": "Age policy in force",
        "policy": policy,
        "document": policy.document,
        "rows": rows,
        "running_network": age_network(),
        "network_matches": policy.network == age_network(),
    }
    return TemplateResponse(request, "admin/age_policy.html", context)
