"""A reader certificate near its expiry, or unable to sign, shows on /readyz and on the operators' admin front page."""

import datetime

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.support.reader_ca import NOW, reader_configure


@pytest.fixture
def operator_client(db):
    operator = User.objects.create_user("ops", password="pw-long-enough-1", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(operator)
    return client


def test_a_chain_within_the_warning_days_warns_on_readyz_and_in_the_admin(settings, tmp_path, operator_client):
    settings.DIGITAL_ID_READER_WARN_DAYS = 30
    reader_configure(settings, tmp_path, not_after=NOW + datetime.timedelta(days=20, hours=1))
    response = Client().get("/readyz")
    assert response.status_code == 200  # the process serves: only the digital ID will need the renewal
    assert response.json()["warnings"]["readerCertificate"].startswith("expiring: the reader certificate expires on")
    page = operator_client.get("/admin/").content.decode()
    assert "Digital ID reader certificate: expiring" in page and "<strong>the reader certificate expires on" in page


def test_an_expired_chain_says_it_cannot_sign(settings, tmp_path, operator_client):
    reader_configure(settings, tmp_path, not_after=NOW - datetime.timedelta(hours=1))
    response = Client().get("/readyz")
    assert response.status_code == 200
    assert response.json()["warnings"]["readerCertificate"].startswith("refused: reader_certificate_expired")
    assert "Digital ID reader certificate: refused" in operator_client.get("/admin/").content.decode()


def test_a_key_that_is_not_the_leaf_says_it_cannot_sign(settings, tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    reader_configure(settings, tmp_path / "a")
    reader_configure(settings, tmp_path / "b")
    settings.DIGITAL_ID_READER_KEY_FILE = str(tmp_path / "a" / "reader.key")  # b's chain, a's key
    warning = Client().get("/readyz").json()["warnings"]["readerCertificate"]
    assert warning.startswith("refused: reader_key_mismatch")


def test_a_chain_far_from_expiry_or_none_at_all_leaves_readyz_as_it_was(settings, tmp_path, operator_client):
    reader_configure(settings, tmp_path, not_after=NOW + datetime.timedelta(days=200))
    assert "warnings" not in Client().get("/readyz").json()
    assert "Digital ID reader certificate: ok" in operator_client.get("/admin/").content.decode()
    settings.DIGITAL_ID_READER_KEY_FILE = ""
    assert "warnings" not in Client().get("/readyz").json()
