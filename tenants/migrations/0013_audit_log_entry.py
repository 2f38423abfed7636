# The audit log moves from the dashboard down to tenants (issue 46): the services that change a tenant write it.
# Only Django's picture of the model moves; the table, its rows and its index stay as the dashboard made them.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def _content_type_to(app_label: str, from_label: str):
    def move(apps, schema_editor):
        content_types = apps.get_model("contenttypes", "ContentType")
        if not content_types.objects.filter(app_label=app_label, model="auditlogentry").exists():
            # Permissions and the admin's history point at the content type: they follow the model.
            content_types.objects.filter(app_label=from_label, model="auditlogentry").update(app_label=app_label)

    return move


class Migration(migrations.Migration):
    dependencies = [
        ("tenants", "0012_digital_id_unsigned_requests"),
        ("dashboard", "0006_audit_age_pass_policy"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AuditLogEntry",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("actor_label", models.CharField(max_length=254)),
                        (
                            "action",
                            models.CharField(
                                choices=[
                                    ("api_key.generated", "API key generated"),
                                    ("api_key.revoked", "API key revoked"),
                                    ("webhook_secret.revealed", "Webhook secret revealed"),
                                    ("webhook_secret.rotated", "Webhook secret rotated"),
                                    ("webhook.resent", "Webhook re-sent"),
                                    ("webhook_address.changed", "Default webhook address changed"),
                                    ("webhook.test_sent", "Test webhook sent"),
                                    ("webhook_events.changed", "Webhook events changed"),
                                    ("session.redacted", "Session redacted"),
                                    ("publishable_key.generated", "Publishable key generated"),
                                    ("publishable_key.changed", "Publishable key settings changed"),
                                    ("publishable_key.revoked", "Publishable key revoked"),
                                    ("member.invited", "Member invited"),
                                    ("invitation.revoked", "Invitation withdrawn"),
                                    ("member.joined", "Invitation accepted"),
                                    ("member.added", "Member added"),
                                    ("member.role_changed", "Member's role changed"),
                                    ("member.removed", "Member removed"),
                                    ("branding.changed", "Branding changed"),
                                    ("age_pass_policy.changed", "Age pass policy changed"),
                                    ("tenant.created", "Tenant created"),
                                    ("tenant.changed", "Tenant settings changed"),
                                ],
                                max_length=40,
                            ),
                        ),
                        ("target_type", models.CharField(max_length=40)),
                        ("target_id", models.CharField(blank=True, max_length=100)),
                        ("target_label", models.CharField(blank=True, max_length=200)),
                        ("ip_address", models.GenericIPAddressField(blank=True, null=True)),
                        ("extra", models.JSONField(blank=True, default=dict)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                        (
                            "actor",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        (
                            "tenant",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.PROTECT,
                                related_name="audit_log_entries",
                                to="tenants.tenant",
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "audit log entry",
                        "verbose_name_plural": "audit log entries",
                        "db_table": "dashboard_auditlogentry",
                        "ordering": ["-created_at", "-id"],
                        "indexes": [models.Index(fields=["tenant", "-created_at"], name="audit_tenant_created_idx")],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_content_type_to("tenants", "dashboard"), _content_type_to("dashboard", "tenants")),
    ]
