"""`manage.py reader_certificate`: the operator's reader certificate, which signs the digital-ID wallet requests.

  reader_certificate csr --organization NAME --country CC [--dns-name HOST] [--key FILE] [--out CSR.pem]
  reader_certificate import ISSUED.pem [--key FILE] [--out CHAIN.pem]
  reader_certificate show
  reader_certificate check      exit status 1 when expiring (DIGITAL_ID_READER_WARN_DAYS) or unable to sign: for cron

`csr` makes a P-256 key (written once, mode 0600, never to the database) and a CSR naming the service's
host as CN and SAN DNS name; give the CSR to the certificate issuer (Apple for Apple Wallet, a registrar's
CA for the EU wallets). `import` takes the issued bundle in any order, puts it leaf first and checks it
(the key is the leaf's, each certificate is issued by the next, all are in date) before it replaces the
chain file. The files default to DIGITAL_ID_READER_KEY_FILE and DIGITAL_ID_READER_CHAIN_FILE.
"""

import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from checks.digital_id.reader import (
    CLIENT_ID_HASH,
    ReaderCertificateRefused,
    ReaderIdentity,
    chain_order,
    reader_csr_create,
    reader_identity_check,
    reader_identity_load,
    reader_key_create,
)
from wallets.reader_certificate import (
    ReaderNotConfigured,
    reader_certificate_status,
    reader_identity,
    service_host,
    wallet_families,
)


def _path(given: str | None, setting: str) -> Path:
    value = given or getattr(settings, setting)
    if not value:
        raise CommandError(f"give a file or set {setting}")
    return Path(value)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None


def _write(path: Path, data: bytes, *, mode: int) -> None:
    """Whole or not at all: written beside the target, then renamed over it."""
    partial = path.with_name(path.name + ".partial")
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(partial, path)
    except OSError as error:
        raise CommandError(f"cannot write {path}: {error.strerror}") from None


class Command(BaseCommand):
    help = "Make the reader key and CSR, import the issued chain, show the reader certificate."

    def add_arguments(self, parser):
        actions = parser.add_subparsers(dest="action", required=True)
        csr = actions.add_parser("csr", help="make the reader key and a certificate signing request")
        csr.add_argument("--organization", required=True, help="the operator's legal name, as the issuer checks it")
        csr.add_argument("--country", required=True, help="two-letter country code")
        csr.add_argument("--dns-name", help="the service's host (default: PUBLIC_BASE_URL's)")
        csr.add_argument("--key", help="where the key goes (default: DIGITAL_ID_READER_KEY_FILE)")
        csr.add_argument("--out", help="where the CSR goes (default: printed)")
        imported = actions.add_parser("import", help="check the issued chain against the key and install it")
        imported.add_argument("file", help="PEM bundle from the issuer: the leaf and its CA certificates")
        imported.add_argument("--key", help="the key the CSR was made with (default: DIGITAL_ID_READER_KEY_FILE)")
        imported.add_argument("--out", help="where the chain goes (default: DIGITAL_ID_READER_CHAIN_FILE)")
        actions.add_parser("show", help="subject, SAN, expiry, client identifiers and the wallets served")
        actions.add_parser("check", help="one line of status; fails when the chain expires soon or cannot sign")

    def handle(self, *args, action, **options):
        getattr(self, "_" + action)(**options)

    def _csr(self, *, organization, country, dns_name, key, out, **_):
        key_path = _path(key, "DIGITAL_ID_READER_KEY_FILE")
        if key_path.exists():
            raise CommandError(
                f"{key_path} exists: a new key would orphan the certificate issued for it (move it first)"
            )
        if len(country) != 2 or not country.isalpha():
            raise CommandError("--country takes a two-letter country code")
        dns_name = dns_name or service_host()
        if not dns_name or "/" in dns_name or ":" in dns_name or " " in dns_name:
            raise CommandError(f"--dns-name takes a host name such as verify.example.com, not {dns_name!r}")
        private_key = reader_key_create()
        request = reader_csr_create(private_key, dns_name=dns_name, organization=organization, country=country.upper())
        _write(
            key_path,
            private_key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ),
            mode=0o600,
        )
        csr_pem = request.public_bytes(serialization.Encoding.PEM)
        if out:
            _write(Path(out), csr_pem, mode=0o644)
            self.stdout.write(f"wrote the key to {key_path} and the CSR for {dns_name} to {out}")
        else:
            self.stderr.write(f"wrote the key to {key_path}; the CSR for {dns_name}:")
            self.stdout.write(csr_pem.decode(), ending="")

    def _import(self, *, file, key, out, **_):
        key_pem = _read(_path(key, "DIGITAL_ID_READER_KEY_FILE"))
        out_path = _path(out, "DIGITAL_ID_READER_CHAIN_FILE")
        try:
            certificates = x509.load_pem_x509_certificates(_read(Path(file)))
        except ValueError:
            raise CommandError(f"{file} holds no PEM certificate") from None
        try:
            identity = reader_identity_load(key_pem=key_pem, chain_pem=b"".join(_pem(c) for c in certificates))
            identity = ReaderIdentity(identity.key, tuple(chain_order(certificates, identity.key)))
            reader_identity_check(identity, now=timezone.now())
        except ReaderCertificateRefused as refused:
            raise CommandError(f"not imported: {refused}") from None
        _write(out_path, b"".join(_pem(c) for c in identity.chain), mode=0o644)
        self.stdout.write(f"imported {len(identity.chain)} certificates to {out_path}")
        self._describe(identity)

    def _show(self, **_):
        try:
            identity = reader_identity()
        except ReaderNotConfigured as unset:
            raise CommandError(str(unset)) from None
        except ReaderCertificateRefused as refused:
            raise CommandError(str(refused)) from None
        self._describe(identity)

    def _check(self, **_):
        status = reader_certificate_status()
        if status.state in ("expiring", "refused"):
            raise CommandError(f"reader certificate {status.state}: {status.detail}")
        self.stdout.write(f"reader certificate {status.state}: {status.detail}")

    def _describe(self, identity: ReaderIdentity):
        leaf = identity.leaf
        status = reader_certificate_status(identity=identity)
        self.stdout.write(f"subject:   {leaf.subject.rfc4514_string()}")
        self.stdout.write(f"issuer:    {leaf.issuer.rfc4514_string()}")
        self.stdout.write(f"SAN DNS:   {', '.join(identity.dns_names) or 'none'}")
        self.stdout.write(f"expires:   {identity.expires_at:%Y-%m-%d %H:%M} UTC")
        self.stdout.write(f"status:    {status.state} ({status.detail})")
        if service_host() in identity.dns_names:
            self.stdout.write(f"client_id: {identity.client_id(dns_name=service_host())}")
        self.stdout.write(f"client_id: {identity.client_id(CLIENT_ID_HASH)}")
        self.stdout.write("wallets:")
        for family in wallet_families(identity):
            self.stdout.write(f"  {'yes' if family.served else 'no ':3} {family.name}: {family.why}")


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)
