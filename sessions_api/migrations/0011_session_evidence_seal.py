"""A session keeps, sealed, the half of the document step's holder check that passed, until it ends (evidence.py).

Adding a text column with a constant default changes no row on PostgreSQL 11+; the partial index holds only the
few sessions with a seal, for the retention purge's sweep.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_api", "0010_age_pass_result"),
        ("tenants", "0008_document_presence_required"),
    ]

    operations = [
        migrations.AddField(
            model_name="verificationsession",
            name="evidence_seal",
            field=models.TextField(blank=True, default=""),
        ),
        migrations.AddIndex(
            model_name="verificationsession",
            index=models.Index(
                condition=models.Q(("evidence_seal", ""), _negated=True),
                fields=["id"],
                name="session_evidence_sealed_idx",
            ),
        ),
    ]
