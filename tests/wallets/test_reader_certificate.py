"""The reader certificate as configured by settings: signing with it, and what its status says."""

import base64
import datetime
import json

import pytest

from checks.digital_id.reader import ReaderCertificateRefused
from tests.support.reader_ca import NOW, reader_ca_create, reader_files
from wallets.reader_certificate import (
    ReaderNotConfigured,
    reader_certificate_status,
    request_object_sign,
    service_host,
)


@pytest.fixture
def configure(settings, tmp_path):
    def configure(**validity):
        key, chain = reader_files(reader_ca_create(), dns_name=service_host(), **validity)
        (tmp_path / "reader.key").write_bytes(key)
        (tmp_path / "chain.pem").write_bytes(chain)
        settings.DIGITAL_ID_READER_KEY_FILE = str(tmp_path / "reader.key")
        settings.DIGITAL_ID_READER_CHAIN_FILE = str(tmp_path / "chain.pem")

    return configure


def _payload(token: str) -> dict:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def test_signs_with_the_configured_files_for_the_service_host(configure):
    configure()
    client_id, token = request_object_sign({"nonce": "abc"})
    assert client_id == f"x509_san_dns:{service_host()}"
    assert _payload(token)["client_id"] == client_id
    assert reader_certificate_status().state == "ok"


def test_x509_hash_scheme_by_setting(configure, settings):
    configure()
    settings.DIGITAL_ID_CLIENT_ID_SCHEME = "x509_hash"
    client_id, _ = request_object_sign({"nonce": "abc"})
    assert client_id.startswith("x509_hash:")


def test_unset_files_sign_nothing(settings):
    settings.DIGITAL_ID_READER_KEY_FILE = ""
    with pytest.raises(ReaderNotConfigured):
        request_object_sign({"nonce": "abc"})
    assert reader_certificate_status().state == "unset"


def test_expired_chain_is_refused_and_said(configure):
    configure(not_after=NOW - datetime.timedelta(minutes=1))
    with pytest.raises(ReaderCertificateRefused):
        request_object_sign({"nonce": "abc"})
    status = reader_certificate_status()
    assert status.state == "refused" and "expired" in status.detail and not status.can_sign


def test_chain_within_the_warning_window_signs_and_warns(configure, settings):
    settings.DIGITAL_ID_READER_WARN_DAYS = 30
    configure(not_after=NOW + datetime.timedelta(days=20))
    request_object_sign({"nonce": "abc"})
    status = reader_certificate_status()
    assert status.state == "expiring" and status.can_sign and "expires on" in status.detail
