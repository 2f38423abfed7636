"""Trusted issuers in the operators' admin: listed once `manage.py trust_anchors` loads them, never edited there."""

from io import StringIO

import pytest
from cryptography.hazmat.primitives import serialization
from django.core.management import call_command

from checks.digital_id.sandbox_wallet import issuer_create
from checks.digital_id.trust import EU_AGE_ATTESTATION
from sessions_api.models import TrustAnchorRecord

pytestmark = pytest.mark.django_db
ANCHORS = "/admin/sessions_api/trustanchorrecord/"


@pytest.fixture
def loaded(tmp_path):
    issuer = issuer_create(country="FR")
    path = tmp_path / "fr.pem"
    path.write_bytes(issuer.root.public_bytes(serialization.Encoding.PEM))
    call_command(
        "trust_anchors", "add-pem", str(path), "--source", "fr-av", "--doc-type", EU_AGE_ATTESTATION, stdout=StringIO()
    )
    return TrustAnchorRecord.objects.get(source="pem:fr-av")


def test_the_operator_sees_a_loaded_anchor_with_its_source_and_doc_types(operator, loaded):
    listed = operator.get(ANCHORS)

    assert listed.status_code == 200
    page = listed.content.decode()
    assert loaded.subject in page
    assert "pem:fr-av" in page
    assert EU_AGE_ATTESTATION in page


def test_an_anchor_cannot_be_added_or_changed_in_the_admin(operator, loaded):
    assert operator.get(f"{ANCHORS}add/").status_code == 403

    shown = operator.get(f"{ANCHORS}{loaded.pk}/change/")
    assert shown.status_code == 200
    assert b'name="subject"' not in shown.content  # read-only: shown as text, no input

    posted = operator.post(f"{ANCHORS}{loaded.pk}/change/", {"subject": "CN=forged", "source": "pem:forged"})
    assert posted.status_code == 403
    loaded.refresh_from_db()
    assert loaded.source == "pem:fr-av"
