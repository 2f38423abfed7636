"""Operators' admin for the wallets: the trusted issuers, read-only (their rows stay in sessions_api)."""

from django.contrib import admin

from sessions_api.models import TrustAnchorRecord


@admin.register(TrustAnchorRecord)
class TrustAnchorAdmin(admin.ModelAdmin):
    """Read-only: anchors are loaded, refreshed and removed by `manage.py trust_anchors`, which checks them."""

    list_display = ("subject", "source", "sandbox", "doc_types", "not_after", "loaded_at")
    list_filter = ("source", "sandbox")
    readonly_fields = (
        "subject",
        "source",
        "sandbox",
        "doc_types",
        "fingerprint",
        "not_after",
        "loaded_at",
        "certificate_pem",
    )

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
