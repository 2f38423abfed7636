# The audit log's model now belongs to tenants (tenants 0013 takes it over); its table stays where it is.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0006_audit_age_pass_policy"),
        ("tenants", "0013_audit_log_entry"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="AuditLogEntry")],
            database_operations=[],
        ),
    ]
