from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("sessions_api", "0013_liveness_timing")]

    operations = [
        migrations.AddField(
            model_name="livenessresult",
            name="signals",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
