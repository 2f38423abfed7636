"""Idempotency keys are scoped per tenant and key mode (CONTRACT 2)."""

import json

from django.db import migrations, models


def mode_from_stored_response(apps, schema_editor):
    # A finished record holds its creation response, which names the session's mode; one still in
    # progress (or unreadable) was most likely live, and expires within 24 h anyway.
    IdempotencyRecord = apps.get_model("sessions_api", "IdempotencyRecord")
    for record in IdempotencyRecord.objects.filter(response_body__isnull=False).iterator():
        body = record.response_body
        try:
            mode = (json.loads(body) if isinstance(body, str) else body)["session"]["mode"]
        except (ValueError, KeyError, TypeError):
            continue
        if mode == "test":
            IdempotencyRecord.objects.filter(pk=record.pk).update(mode="test")


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_api", "0001_initial"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="idempotencyrecord", name="idempotency_unique_tenant_key"),
        migrations.AddField(
            model_name="idempotencyrecord",
            name="mode",
            field=models.CharField(
                choices=[("live", "Live"), ("test", "Test (sandbox)")], default="live", max_length=4
            ),
            preserve_default=False,
        ),
        migrations.RunPython(mode_from_stored_response, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="idempotencyrecord",
            constraint=models.UniqueConstraint(
                fields=("tenant", "mode", "key"), name="idempotency_unique_tenant_mode_key"
            ),
        ),
    ]
