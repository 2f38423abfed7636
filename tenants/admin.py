"""Operators' admin for tenants, API keys and memberships."""

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

from .admin_lookups import SecretColumnsNotFilterable
from .forms import PublishableKeySettingsForm
from .models import ApiKey, Membership, PublishableKey, Tenant
from .services import api_key_revoke, api_keys_changed, publishable_key_revoke, webhook_secret_new


def secret_hint(secret: str) -> str:
    """Enough of a webhook secret to tell two apart (its last 4 characters), never enough to sign with."""
    return f"whsec_…{secret[-4:]}" if secret else "—"


def _log_action(model_admin, request, queryset, message: str) -> None:
    # Admin actions bypass the change form, so Django records nothing: leave the same trail it would.
    for obj in queryset:
        model_admin.log_change(request, obj, message)


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    extra = 0
    can_delete = False
    fields = ("display_prefix", "mode", "label", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None):
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)


@admin.register(Tenant)
class TenantAdmin(SecretColumnsNotFilterable):
    list_display = (
        "name",
        "id",
        "enabled",
        "webhooks_enabled",
        "digital_id_enabled",
        "session_ttl_seconds",
        "retention_days",
        "created_at",
    )
    list_filter = ("enabled", "webhooks_enabled", "digital_id_enabled", "digital_id_unsigned_requests")
    search_fields = ("name", "id", "contact_email")
    # Operators never need a partner's signing secret (staff reveal it, audited, in the dashboard): a hint only.
    readonly_fields = (
        "id",
        "created_at",
        "signing_secret",
        "previous_signing_secret",
        "webhook_secret_previous_expires_at",
        "test_signing_secret",
        "previous_test_signing_secret",
        "test_webhook_secret_previous_expires_at",
    )
    exclude = ("webhook_secret", "webhook_secret_previous", "test_webhook_secret", "test_webhook_secret_previous")
    inlines = [ApiKeyInline, MembershipInline]
    actions = ["enable_webhooks", "disable_webhooks", "disable_tenants", "enable_tenants"]

    @admin.display(description="webhook signing secret")
    def signing_secret(self, tenant):
        return secret_hint(tenant.webhook_secret)

    @admin.display(description="previous signing secret")
    def previous_signing_secret(self, tenant):
        return secret_hint(tenant.webhook_secret_previous)

    @admin.display(description="test-mode signing secret")
    def test_signing_secret(self, tenant):
        return secret_hint(tenant.test_webhook_secret)

    @admin.display(description="previous test-mode signing secret")
    def previous_test_signing_secret(self, tenant):
        return secret_hint(tenant.test_webhook_secret_previous)

    def save_model(self, request, obj, form, change):
        if not change and not obj.webhook_secret:
            obj.webhook_secret = webhook_secret_new()  # as onboarding does: without one no webhook can be signed
        if not change and not obj.test_webhook_secret:
            obj.test_webhook_secret = webhook_secret_new()
        super().save_model(request, obj, form, change)

    @admin.action(description="Enable webhook sending")
    def enable_webhooks(self, request, queryset):
        queryset.update(webhooks_enabled=True)
        _log_action(self, request, queryset, "Enabled webhook sending.")

    @admin.action(description="Disable webhook sending")
    def disable_webhooks(self, request, queryset):
        queryset.update(webhooks_enabled=False)
        _log_action(self, request, queryset, "Disabled webhook sending.")

    @admin.action(description="Disable tenants (their keys get 403)")
    def disable_tenants(self, request, queryset):
        queryset.update(enabled=False)
        api_keys_changed()
        _log_action(self, request, queryset, "Disabled the tenant.")

    @admin.action(description="Enable tenants")
    def enable_tenants(self, request, queryset):
        queryset.update(enabled=True)
        api_keys_changed()
        _log_action(self, request, queryset, "Enabled the tenant.")


@admin.register(ApiKey)
class ApiKeyAdmin(SecretColumnsNotFilterable):
    list_display = (
        "display_prefix",
        "tenant",
        "mode",
        "label",
        "created_at",
        "last_used_at",
        "revoked_at",
        "exposed_at",
    )
    list_filter = ("mode", ("revoked_at", admin.EmptyFieldListFilter), ("exposed_at", admin.EmptyFieldListFilter))
    search_fields = ("prefix", "tenant__name", "tenant__id", "label")
    fields = (
        "tenant",
        "mode",
        "prefix",
        "label",
        "created_at",
        "created_by",
        "last_used_at",
        "revoked_at",
        "exposed_at",
    )
    readonly_fields = fields  # the hash is never shown; keys are generated by the service, not typed in
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        for api_key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(api_key=api_key)
            self.log_change(request, api_key, "Revoked the key.")
        messages.success(request, "Selected keys are revoked; they fail at once.")


class PublishableKeyAdminForm(PublishableKeySettingsForm):
    class Meta(PublishableKeySettingsForm.Meta):
        fields = ("tenant", "mode", *PublishableKeySettingsForm.Meta.fields)


@admin.register(PublishableKey)
class PublishableKeyAdmin(SecretColumnsNotFilterable):
    """SDK mode keys: public, so shown in full; the key itself is generated by the service."""

    form = PublishableKeyAdminForm
    list_display = (
        "key",
        "tenant",
        "mode",
        "label",
        "client_sessions_enabled",
        "created_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("mode", "client_sessions_enabled", ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("key", "tenant__name", "tenant__id", "label")
    autocomplete_fields = ("tenant",)
    actions = ["revoke"]

    def get_readonly_fields(self, request, obj=None):
        fixed = ("key", "created_at", "created_by", "last_used_at", "revoked_at")
        return (*fixed, "tenant", "mode") if obj else fixed

    def save_model(self, request, obj, form, change):
        if not change:
            obj.key = PublishableKey.new_key(obj.mode)
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    @admin.action(description="Revoke selected publishable keys")
    def revoke(self, request, queryset):
        for key in queryset.filter(revoked_at__isnull=True):
            publishable_key_revoke(key=key)
            self.log_change(request, key, "Revoked the publishable key.")
        messages.success(request, "Selected publishable keys are revoked; they fail at once.")


@admin.register(Membership)
class MembershipAdmin(SecretColumnsNotFilterable):
    list_display = ("user", "tenant", "created_at")
    search_fields = ("user__username", "user__email", "tenant__name", "tenant__id")
    autocomplete_fields = ("user", "tenant")


# Django's user admin, with the same refusal: `?password__startswith=` would read a password hash back.
class OperatorUserAdmin(SecretColumnsNotFilterable, UserAdmin):
    pass


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), OperatorUserAdmin)
