"""Operators' admin for tenants, API keys and memberships.

Every change goes through the owning service with the signed-in operator as its actor (tenants.audit), so
it is in the tenant's audit log as any dashboard change is; no action saves or updates rows itself.
"""

from contextlib import contextmanager

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import ValidationError

from .admin_lookups import SecretColumnsNotFilterable
from .audit import Actor
from .audit import secret_hint as audit_secret_hint
from .forms import PublishableKeySettingsForm
from .members import membership_remove, membership_role_change
from .models import ApiKey, Membership, PublishableKey, Tenant
from .services import (
    api_key_revoke,
    membership_add,
    publishable_key_generate,
    publishable_key_revoke,
    publishable_key_update,
    tenant_create,
    tenant_settings_update,
    tenant_webhook_secret_rotate,
)


def secret_hint(secret: str) -> str:
    """The audit log's hint of a webhook secret (its last 4 characters), or a dash for none."""
    return audit_secret_hint(secret) or "—"


def _saved_as(obj, saved) -> None:
    """Give the admin's unsaved form object the row the service saved, so the admin's next page finds it."""
    for field in saved._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding = False


@contextmanager
def _refusal_shown(request):
    """A team rule the service refuses (the last owner stays) is a message on the page, not an error page."""
    try:
        yield
    except ValidationError as refused:
        messages.error(request, " ".join(refused.messages))
        request.team_change_refused = True


class TeamRulesShown:
    """No "changed successfully" beside the refusal of a team rule: the page says only what happened."""

    def message_user(self, request, message, level=messages.INFO, *args, **kwargs):
        if level == messages.SUCCESS and getattr(request, "team_change_refused", False):
            return
        super().message_user(request, message, level, *args, **kwargs)


def _tenants_set(model_admin, request, queryset, message: str, **fields) -> None:
    # Admin actions bypass the change form, so Django records nothing: leave the same trail it would,
    # beside the tenant's own audit row that the service writes.
    for tenant in queryset:
        tenant_settings_update(tenant=tenant, actor=Actor.operator(request), **fields)
        model_admin.log_change(request, tenant, message)


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
class TenantAdmin(TeamRulesShown, SecretColumnsNotFilterable):
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
    actions = [
        "enable_webhooks",
        "disable_webhooks",
        "disable_tenants",
        "enable_tenants",
        "rotate_live_webhook_secret",
        "rotate_test_webhook_secret",
    ]

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
        fields = {name: form.cleaned_data[name] for name in form.changed_data if name in form.cleaned_data}
        if change:
            _saved_as(obj, tenant_settings_update(tenant=obj, actor=Actor.operator(request), **fields))
            return
        # Onboarding, as create_tenant does but without keys (no page here may show a raw key): the
        # tenant's staff generate theirs in the dashboard.
        name = fields.pop("name")
        onboarded = tenant_create(name=name, actor=Actor.operator(request), with_keys=False, **fields)
        _saved_as(obj, onboarded.tenant)

    def save_formset(self, request, form, formset, change):
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        actor = Actor.operator(request)
        with _refusal_shown(request):
            for membership in formset.save(commit=False):
                if membership.pk is None:
                    membership_add(tenant=form.instance, user=membership.user, role=membership.role, actor=actor)
                else:
                    membership_role_change(membership=membership, role=membership.role, actor=actor)
            for membership in formset.deleted_objects:
                membership_remove(membership=membership, actor=actor)

    @admin.action(description="Enable webhook sending")
    def enable_webhooks(self, request, queryset):
        _tenants_set(self, request, queryset, "Enabled webhook sending.", webhooks_enabled=True)

    @admin.action(description="Disable webhook sending")
    def disable_webhooks(self, request, queryset):
        _tenants_set(self, request, queryset, "Disabled webhook sending.", webhooks_enabled=False)

    @admin.action(description="Disable tenants (their keys get 403)")
    def disable_tenants(self, request, queryset):
        _tenants_set(self, request, queryset, "Disabled the tenant.", enabled=False)

    @admin.action(description="Enable tenants")
    def enable_tenants(self, request, queryset):
        _tenants_set(self, request, queryset, "Enabled the tenant.", enabled=True)

    def _rotate(self, request, queryset, mode: str) -> None:
        for tenant in queryset:
            tenant_webhook_secret_rotate(tenant=tenant, mode=mode, actor=Actor.operator(request))
            self.log_change(request, tenant, f"Rotated the {mode} webhook signing secret.")
        messages.success(
            request,
            f"New {mode} signing secrets made; the previous ones sign beside them for 24 hours. "
            "The tenants' staff read the new ones on their dashboard's Webhooks page.",
        )

    @admin.action(description="Rotate the live webhook signing secret")
    def rotate_live_webhook_secret(self, request, queryset):
        self._rotate(request, queryset, ApiKey.Mode.LIVE)

    @admin.action(description="Rotate the test-mode webhook signing secret")
    def rotate_test_webhook_secret(self, request, queryset):
        self._rotate(request, queryset, ApiKey.Mode.TEST)


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

    def has_delete_permission(self, request, obj=None):
        return False  # a key is revoked (and the revocation audited), never deleted

    @admin.action(description="Revoke selected keys")
    def revoke(self, request, queryset):
        for api_key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(api_key=api_key, actor=Actor.operator(request))
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

    def has_delete_permission(self, request, obj=None):
        return False  # revoked (and the revocation audited), never deleted

    def save_model(self, request, obj, form, change):
        actor = Actor.operator(request)
        settings = {name: form.cleaned_data[name] for name in PublishableKeySettingsForm.Meta.fields}
        if change:
            changed = {name: value for name, value in settings.items() if name in form.changed_data}
            if changed:
                _saved_as(obj, publishable_key_update(key=obj, actor=actor, **changed))
            return
        key = publishable_key_generate(tenant=obj.tenant, mode=obj.mode, actor=actor, **settings)
        _saved_as(obj, key)

    @admin.action(description="Revoke selected publishable keys")
    def revoke(self, request, queryset):
        for key in queryset.filter(revoked_at__isnull=True):
            publishable_key_revoke(key=key, actor=Actor.operator(request))
            self.log_change(request, key, "Revoked the publishable key.")
        messages.success(request, "Selected publishable keys are revoked; they fail at once.")


@admin.register(Membership)
class MembershipAdmin(TeamRulesShown, SecretColumnsNotFilterable):
    list_display = ("user", "tenant", "role", "created_at")
    search_fields = ("user__username", "user__email", "tenant__name", "tenant__id")
    autocomplete_fields = ("user", "tenant")

    def get_readonly_fields(self, request, obj=None):
        return ("user", "tenant") if obj else ()  # a membership changes its role; another person is another one

    def save_model(self, request, obj, form, change):
        actor, role = Actor.operator(request), form.cleaned_data["role"]
        with _refusal_shown(request):
            if change:
                _saved_as(obj, membership_role_change(membership=obj, role=role, actor=actor))
            else:
                _saved_as(obj, membership_add(tenant=obj.tenant, user=obj.user, role=role, actor=actor))

    def delete_model(self, request, obj):
        with _refusal_shown(request):
            membership_remove(membership=obj, actor=Actor.operator(request))

    def delete_queryset(self, request, queryset):
        for membership in queryset:
            self.delete_model(request, membership)


# Django's user admin, with the same refusal: `?password__startswith=` would read a password hash back.
class OperatorUserAdmin(SecretColumnsNotFilterable, UserAdmin):
    pass


admin.site.unregister(get_user_model())
admin.site.register(get_user_model(), OperatorUserAdmin)
