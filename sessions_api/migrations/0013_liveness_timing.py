from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("sessions_api", "0012_session_metadata_redaction_opened")]

    operations = [
        migrations.AddField(
            model_name="verificationsession",
            name="liveness_timing",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
