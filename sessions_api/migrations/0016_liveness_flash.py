from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("sessions_api", "0015_session_consented_at")]

    operations = [
        migrations.AddField(
            model_name="verificationsession",
            name="liveness_flash",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
