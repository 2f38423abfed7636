"""The session's step and the event's user-facing message, backfilled from the history they used to be read from."""

from django.db import migrations, models

RETAKE_CAUSE_PREFIX = "retake: "


def backfill(apps, schema_editor):
    VerificationSession = apps.get_model("sessions_api", "VerificationSession")
    SessionEvent = apps.get_model("sessions_api", "SessionEvent")
    # A session is on the document step once any transition took it to requires_doc; before this
    # field, the step of a session in processing was read from the status it entered processing from.
    on_document = SessionEvent.objects.filter(to_status="requires_doc").values("session_id")
    VerificationSession.objects.filter(pk__in=on_document).update(step="document")
    # A retake's message to the user was kept in the operator's cause, after a "retake: " prefix.
    retakes = SessionEvent.objects.filter(cause__startswith=RETAKE_CAUSE_PREFIX)
    for event in retakes.only("id", "cause").iterator():
        SessionEvent.objects.filter(pk=event.pk).update(message=event.cause[len(RETAKE_CAUSE_PREFIX) :])


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_api", "0002_idempotency_per_mode"),
    ]

    operations = [
        migrations.AddField(
            model_name="sessionevent",
            name="message",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="verificationsession",
            name="step",
            field=models.CharField(
                choices=[("selfie", "Selfie"), ("document", "Document")], default="selfie", max_length=8
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
