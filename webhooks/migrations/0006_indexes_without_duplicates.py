"""Each webhook attempt updates its delivery twice and inserts an attempt: every index below was paid for
on each of those writes, and no query uses it.

- An attempt's delivery_id had an index of its own and a `varchar_pattern_ops` copy, while
  attempt_unique_number (delivery_id, number) leads with it and serves every lookup and the cascade.
- A delivery's id, tenant_id and subject_ref each had a `varchar_pattern_ops` copy (PostgreSQL only),
  which serves LIKE 'prefix%' only: nothing runs one (the admin's search is a LIKE '%text%').
"""

import django.db.models.deletion
from django.db import migrations, models

LIKE_INDEXES = {
    "webhooks_webhookdelivery_id_c864ad1c_like": "id",
    "webhooks_webhookdelivery_tenant_id_9545aa29_like": "tenant_id",
    "webhooks_webhookdelivery_subject_ref_07555b63_like": "subject_ref",
}


def _drop_like_indexes(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for name in LIKE_INDEXES:
            schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


def _create_like_indexes(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for name, column in LIKE_INDEXES.items():
            schema_editor.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON webhooks_webhookdelivery ({column} varchar_pattern_ops)"
            )


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0005_delivery_tenant_due_index"),
    ]

    operations = [
        migrations.AlterField(
            model_name="webhookattempt",
            name="delivery",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="attempts",
                to="webhooks.webhookdelivery",
            ),
        ),
        migrations.RunPython(_drop_like_indexes, _create_like_indexes),
    ]
