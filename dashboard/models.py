"""The audit log: who did what to a tenant's keys, secrets, webhooks, team, branding and pass policy, and when."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from tenants.models import Tenant


class AuditLogEntry(models.Model):
    class Action(models.TextChoices):
        API_KEY_GENERATED = "api_key.generated", "API key generated"
        API_KEY_REVOKED = "api_key.revoked", "API key revoked"
        WEBHOOK_SECRET_REVEALED = "webhook_secret.revealed", "Webhook secret revealed"
        WEBHOOK_SECRET_ROTATED = "webhook_secret.rotated", "Webhook secret rotated"
        WEBHOOK_RESENT = "webhook.resent", "Webhook re-sent"
        WEBHOOK_ADDRESS_CHANGED = "webhook_address.changed", "Default webhook address changed"
        WEBHOOK_TEST_SENT = "webhook.test_sent", "Test webhook sent"
        WEBHOOK_EVENTS_CHANGED = "webhook_events.changed", "Webhook events changed"
        SESSION_REDACTED = "session.redacted", "Session redacted"
        PUBLISHABLE_KEY_GENERATED = "publishable_key.generated", "Publishable key generated"
        PUBLISHABLE_KEY_CHANGED = "publishable_key.changed", "Publishable key settings changed"
        PUBLISHABLE_KEY_REVOKED = "publishable_key.revoked", "Publishable key revoked"
        MEMBER_INVITED = "member.invited", "Member invited"
        INVITATION_REVOKED = "invitation.revoked", "Invitation withdrawn"
        MEMBER_JOINED = "member.joined", "Invitation accepted"
        MEMBER_ROLE_CHANGED = "member.role_changed", "Member's role changed"
        MEMBER_REMOVED = "member.removed", "Member removed"
        BRANDING_CHANGED = "branding.changed", "Branding changed"
        AGE_PASS_POLICY_CHANGED = "age_pass_policy.changed", "Age pass policy changed"

    # PROTECT: an audit trail outlives nothing it describes; a tenant with history is disabled, not deleted.
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="audit_log_entries")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A copy of who it was, so the entry still names them after the user is deleted.
    actor_label = models.CharField(max_length=254)
    action = models.CharField(max_length=40, choices=Action.choices)
    target_type = models.CharField(max_length=40)
    target_id = models.CharField(max_length=100, blank=True)
    target_label = models.CharField(max_length=200, blank=True)
    ip_address = models.GenericIPAddressField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "audit log entry"
        verbose_name_plural = "audit log entries"
        indexes = [models.Index(fields=["tenant", "-created_at"], name="audit_tenant_created_idx")]

    def __str__(self):
        return f"{self.get_action_display()} by {self.actor_label} at {self.created_at:%Y-%m-%d %H:%M:%S}"
