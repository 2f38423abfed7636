from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("sessions_api", "0009_session_indexes_without_duplicates")]

    operations = [
        migrations.AddField(
            model_name="verificationsession",
            name="liveness_timing",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
