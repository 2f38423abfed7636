"""Every session insert paid for three indexes no query uses; creating a session is the API's busiest write.

- tenant_id had an index of its own and a `varchar_pattern_ops` copy, while session_tenant_created_idx
  (tenant_id, created_at DESC) already serves every tenant-filtered query and the PROTECT check.
- The primary key's `varchar_pattern_ops` copy (PostgreSQL only) serves LIKE on the id, which nothing runs.
"""

import django.db.models.deletion
from django.db import migrations, models

ID_LIKE_INDEX = "sessions_api_verificationsession_id_7d486706_like"


def _postgresql(sql):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_api", "0008_document_holder_match"),
        ("tenants", "0008_document_presence_required"),
    ]

    operations = [
        migrations.AlterField(
            model_name="verificationsession",
            name="tenant",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="sessions",
                to="tenants.tenant",
            ),
        ),
        migrations.RunPython(
            _postgresql(f"DROP INDEX IF EXISTS {ID_LIKE_INDEX}"),
            _postgresql(
                f"CREATE INDEX IF NOT EXISTS {ID_LIKE_INDEX} ON sessions_api_verificationsession "
                "(id varchar_pattern_ops)"
            ),
        ),
    ]
