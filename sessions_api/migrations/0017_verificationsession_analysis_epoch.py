from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_api", "0016_liveness_flash"),
    ]

    operations = [
        migrations.AddField(
            model_name="verificationsession",
            name="analysis_epoch",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
    ]
