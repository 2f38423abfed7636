"""agePass shows the session's own limit and the proof's age in buckets, not the days of proof and expiry."""

from django.db import migrations, models

from sessions_api.choices import ProofAge


def coarsen(apps, schema_editor):
    """Each stored result keeps its session's limit and its proof's age at the time it was shown."""
    AgePassResult = apps.get_model("sessions_api", "AgePassResult")
    for result in AgePassResult.objects.select_related("session"):
        result.proof_age = ProofAge.of((result.created_at.date() - result.proved_on).days)
        result.thresholds = [result.session.age_limit]
        result.save(update_fields=["proof_age", "thresholds"])


class Migration(migrations.Migration):
    dependencies = [("sessions_api", "0017_verificationsession_analysis_epoch")]

    operations = [
        migrations.AddField(
            model_name="agepassresult",
            name="proof_age",
            field=models.CharField(choices=ProofAge.choices, default=ProofAge.OVER_1_YEAR, max_length=14),
            preserve_default=False,
        ),
        migrations.RunPython(coarsen, migrations.RunPython.noop),
        migrations.RemoveField(model_name="agepassresult", name="proved_on"),
        migrations.RemoveField(model_name="agepassresult", name="expires_on"),
    ]
