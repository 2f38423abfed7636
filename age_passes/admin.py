"""The operator's view of age passes: what each proves (never whom), the tenants' policies, revocation by method."""

from django.contrib import admin, messages

from tenants.audit import Actor

from .models import AgePass, AgePassPolicy, Method
from .services import POLICY_FIELDS, age_pass_policy_set, age_passes_revoke


@admin.register(AgePass)
class AgePassAdmin(admin.ModelAdmin):
    list_display = ("id", "method", "thresholds", "proved_on", "expires_on", "revoked_at")
    list_filter = ("method", "revoked_at")
    fields = ("method", "thresholds", "proved_on", "expires_on", "revoked_at", "sign_count")
    readonly_fields = fields
    actions = ["revoke_by_method"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke every pass proved by the method(s) of the selected passes")
    def revoke_by_method(self, request, queryset):
        for method in sorted(set(queryset.values_list("method", flat=True))):
            revoked = age_passes_revoke(method=method)
            self.message_user(
                request, f"{revoked} age passes proved by {Method(method).label} revoked.", messages.SUCCESS
            )


@admin.register(AgePassPolicy)
class AgePassPolicyAdmin(admin.ModelAdmin):
    list_display = ("tenant", "offer_saving", "accept_passes", "minimum_method", "max_proof_age_days", "lifetime_days")
    autocomplete_fields = ("tenant",)

    def get_readonly_fields(self, request, obj=None):
        return ("tenant",) if obj else ()  # a policy is its tenant's: another tenant gets its own

    def has_delete_permission(self, request, obj=None):
        return False  # changed (and the change audited) through age_pass_policy_set, never deleted

    def save_model(self, request, obj, form, change):
        policy = age_pass_policy_set(
            tenant=obj.tenant, actor=Actor.operator(request), **{name: getattr(obj, name) for name in POLICY_FIELDS}
        )
        obj.pk = policy.pk
