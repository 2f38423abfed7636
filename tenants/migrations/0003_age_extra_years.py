"""The fixed age buffer gives way to the calibrated policy: tenants keep only what made theirs stricter.

The old rule passed a face at age_limit + age_buffer_years (service default 5). The calibrated
threshold replaces that default, so a tenant's buffer above 5 carries over as extra years on top of
the policy, and a minimum confidence below the policy's floor is raised to it.
"""

import django.core.validators
from django.db import migrations, models

OLD_DEFAULT_BUFFER = 5
CONFIDENCE_FLOOR = 0.5


def forwards(apps, schema_editor):
    Tenant = apps.get_model("tenants", "Tenant")
    for tenant in Tenant.objects.all():
        tenant.age_extra_years = max(0, tenant.age_buffer_years - OLD_DEFAULT_BUFFER)
        tenant.min_age_confidence = max(CONFIDENCE_FLOOR, tenant.min_age_confidence)
        tenant.save(update_fields=["age_extra_years", "min_age_confidence"])


def backwards(apps, schema_editor):
    Tenant = apps.get_model("tenants", "Tenant")
    for tenant in Tenant.objects.all():
        tenant.age_buffer_years = OLD_DEFAULT_BUFFER + tenant.age_extra_years
        tenant.save(update_fields=["age_buffer_years"])


class Migration(migrations.Migration):
    dependencies = [("tenants", "0002_test_webhook_secret")]

    operations = [
        migrations.AddField(
            model_name="tenant",
            name="age_extra_years",
            field=models.SmallIntegerField(
                default=0,
                help_text="Years added to the calibrated policy's threshold for every age limit (0: the policy as is).",
                validators=[
                    django.core.validators.MinValueValidator(
                        0,
                        message="Tenants may make the calibrated age policy stricter, never looser: extra years cannot be negative.",
                    ),
                    django.core.validators.MaxValueValidator(15),
                ],
            ),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.RemoveField(model_name="tenant", name="age_buffer_years"),
        migrations.AlterField(
            model_name="tenant",
            name="min_age_confidence",
            field=models.FloatField(
                default=0.5,
                help_text="A face passes only when ageConfidence, the calibrated probability that the person is at least the age limit, reaches this too (0.5: the policy's own floor).",
                validators=[
                    django.core.validators.MinValueValidator(
                        0.5,
                        message="Tenants may make the calibrated age policy stricter, never looser: the minimum age confidence must be at least 0.5.",
                    ),
                    django.core.validators.MaxValueValidator(1.0),
                ],
            ),
        ),
        migrations.AddConstraint(
            model_name="tenant",
            constraint=models.CheckConstraint(
                condition=models.Q(("age_extra_years__gte", 0), ("age_extra_years__lte", 15)),
                name="tenant_age_extra_years_stricter_only",
            ),
        ),
        migrations.AddConstraint(
            model_name="tenant",
            constraint=models.CheckConstraint(
                condition=models.Q(("min_age_confidence__gte", 0.5), ("min_age_confidence__lte", 1.0)),
                name="tenant_min_age_confidence_stricter_only",
            ),
        ),
    ]
