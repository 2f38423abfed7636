"""`manage.py reader_certificate`: a CSR out, the chain a CA issued for it back in, and what `show` says."""

import datetime
import io
import stat

import pytest
from cryptography import x509
from django.core.management import call_command
from django.core.management.base import CommandError

from checks.digital_id.reader import reader_csr_create
from tests.support.reader_ca import NOW, pem, reader_ca_create, reader_configure
from wallets.reader_certificate import request_object_sign, service_host


def _run(*args) -> str:
    out = io.StringIO()
    call_command("reader_certificate", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


@pytest.fixture
def files(settings, tmp_path):
    settings.DIGITAL_ID_READER_KEY_FILE = str(tmp_path / "reader.key")
    settings.DIGITAL_ID_READER_CHAIN_FILE = str(tmp_path / "reader-chain.pem")
    return tmp_path


def _csr(files) -> x509.CertificateSigningRequest:
    _run("csr", "--organization", "Example Operator Ltd", "--country", "ut", "--out", str(files / "reader.csr"))
    return x509.load_pem_x509_csr((files / "reader.csr").read_bytes())


def test_csr_then_the_issued_chain_round_trips_and_signs(files):
    csr = _csr(files)
    assert csr.is_signature_valid
    assert stat.S_IMODE((files / "reader.key").stat().st_mode) == 0o600
    san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == [service_host()]
    assert "O=Example Operator Ltd" in csr.subject.rfc4514_string() and "C=UT" in csr.subject.rfc4514_string()

    ca = reader_ca_create(name="Operators' Reader CA")
    leaf = ca.issue(csr, not_after=NOW + datetime.timedelta(days=200))
    (files / "issued.pem").write_bytes(pem(ca.root, leaf))  # CAs hand bundles out in any order
    out = _run("import", str(files / "issued.pem"))
    assert "imported 2 certificates" in out
    chain = x509.load_pem_x509_certificates((files / "reader-chain.pem").read_bytes())
    assert chain == [leaf, ca.root]  # leaf first

    shown = _run("show")
    assert f"SAN DNS:   {service_host()}" in shown
    assert f"expires:   {leaf.not_valid_after_utc:%Y-%m-%d}" in shown
    assert "CN=Operators' Reader CA" in shown and "status:    ok" in shown
    assert f"client_id: x509_san_dns:{service_host()}" in shown and "client_id: x509_hash:" in shown
    assert "no  Apple Wallet" in shown and "yes EU reference wallet" in shown

    client_id, _ = request_object_sign({"nonce": "n"})
    assert client_id == f"x509_san_dns:{service_host()}"


def test_apple_issued_chain_is_shown_serving_apple_wallet(files):
    ca = reader_ca_create(name="Apple Reader CA", organization="Apple Inc.")
    (files / "issued.pem").write_bytes(pem(ca.issue(_csr(files)), ca.root))
    assert "yes Apple Wallet" in _run("import", str(files / "issued.pem"))


def test_a_chain_issued_for_another_key_is_not_imported(files):
    _csr(files)
    ca = reader_ca_create()
    other_csr_key = reader_ca_create().key  # any key but ours
    other = ca.issue(reader_csr_create(other_csr_key, dns_name=service_host(), organization="X", country="UT"))
    (files / "issued.pem").write_bytes(pem(other, ca.root))
    with pytest.raises(CommandError, match="reader_key_mismatch"):
        _run("import", str(files / "issued.pem"))
    assert not (files / "reader-chain.pem").exists()


@pytest.mark.parametrize(
    "validity, code",
    [({"not_after": NOW - datetime.timedelta(days=1)}, "reader_certificate_expired"), ({}, "reader_chain_broken")],
)
def test_an_expired_or_broken_chain_is_not_imported_and_the_old_one_stays(files, validity, code):
    ca = reader_ca_create()
    csr = _csr(files)
    (files / "reader-chain.pem").write_bytes(b"the chain in use\n")
    root = ca.root if validity else reader_ca_create().root  # broken: a root that did not issue the leaf
    (files / "issued.pem").write_bytes(pem(ca.issue(csr, **validity), root))
    with pytest.raises(CommandError, match=code):
        _run("import", str(files / "issued.pem"))
    assert (files / "reader-chain.pem").read_bytes() == b"the chain in use\n"


def test_csr_never_overwrites_a_key(files):
    (files / "reader.key").write_bytes(b"the key in use")
    with pytest.raises(CommandError, match="exists"):
        _csr(files)
    assert (files / "reader.key").read_bytes() == b"the key in use"


def test_show_without_configuration_says_what_to_set(settings):
    settings.DIGITAL_ID_READER_KEY_FILE = ""
    with pytest.raises(CommandError, match="DIGITAL_ID_READER_KEY_FILE"):
        _run("show")


def test_csr_into_a_missing_folder_or_for_a_url_says_so(settings, tmp_path):
    settings.DIGITAL_ID_READER_KEY_FILE = str(tmp_path / "missing" / "reader.key")
    with pytest.raises(CommandError, match="cannot write"):
        _run("csr", "--organization", "O", "--country", "UT")
    settings.DIGITAL_ID_READER_KEY_FILE = str(tmp_path / "reader.key")
    with pytest.raises(CommandError, match="host name"):
        _run("csr", "--organization", "O", "--country", "UT", "--dns-name", "https://verify.example")
    assert not (tmp_path / "reader.key").exists()


def test_check_fails_for_cron_when_the_chain_expires_soon(settings, tmp_path):
    settings.DIGITAL_ID_READER_WARN_DAYS = 30
    reader_configure(settings, tmp_path, not_after=NOW + datetime.timedelta(days=200))
    assert _run("check").startswith("reader certificate ok: valid until")
    reader_configure(settings, tmp_path, not_after=NOW + datetime.timedelta(days=10))
    with pytest.raises(CommandError, match="reader certificate expiring: the reader certificate expires on"):
        _run("check")
