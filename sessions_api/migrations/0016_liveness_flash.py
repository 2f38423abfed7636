from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("sessions_api", "0014_liveness_signals")]

    operations = [
        migrations.AddField(
            model_name="verificationsession",
            name="liveness_flash",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
