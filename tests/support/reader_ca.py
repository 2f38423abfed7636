"""A certificate authority played by the tests: it issues the operator's reader certificate from a CSR."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from checks.digital_id.reader import reader_csr_create, reader_key_create

NOW = datetime.datetime.now(datetime.UTC)


@dataclass(frozen=True)
class ReaderCa:
    key: ec.EllipticCurvePrivateKey
    root: x509.Certificate

    def issue(
        self,
        csr: x509.CertificateSigningRequest,
        *,
        not_before: datetime.datetime | None = None,
        not_after: datetime.datetime | None = None,
    ) -> x509.Certificate:
        """A leaf for the CSR's key with the CSR's subject and SAN, as a reader CA would issue it."""
        not_before = not_before or NOW - datetime.timedelta(days=1)
        not_after = not_after or NOW + datetime.timedelta(days=365)
        san = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        return (
            x509.CertificateBuilder()
            .subject_name(csr.subject)
            .issuer_name(self.root.subject)
            .public_key(csr.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(not_before)
            .not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName(list(san)), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            .sign(self.key, hashes.SHA256())
        )

    def subordinate(self, *, name: str = "Test Reader Issuing CA") -> ReaderCa:
        """An issuing CA under this one: its `root` is the intermediate certificate this CA signed."""
        key = ec.generate_private_key(ec.SECP256R1())
        certificate = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(self.root.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(NOW - datetime.timedelta(days=30))
            .not_valid_after(NOW + datetime.timedelta(days=1825))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        return ReaderCa(key, certificate)

    def root_pem(self) -> bytes:
        return self.root.public_bytes(serialization.Encoding.PEM)


def reader_ca_create(*, name: str = "Test Reader CA", organization: str = "Test CA Inc.") -> ReaderCa:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
            x509.NameAttribute(NameOID.COMMON_NAME, name),
        ]
    )
    root = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - datetime.timedelta(days=30))
        .not_valid_after(NOW + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return ReaderCa(key, root)


def pem(*certificates: x509.Certificate) -> bytes:
    return b"".join(certificate.public_bytes(serialization.Encoding.PEM) for certificate in certificates)


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def reader_files(ca: ReaderCa, *, dns_name: str = "verify.example", **validity) -> tuple[bytes, bytes]:
    """(key PEM, chain PEM leaf first) of a reader certificate the CA issued for `dns_name`."""
    key = reader_key_create()
    csr = reader_csr_create(key, dns_name=dns_name, organization="AgeVerify operator", country="UT")
    return key_pem(key), pem(ca.issue(csr, **validity), ca.root)


def reader_configure(settings, directory: Path, *, ca: ReaderCa | None = None, **validity) -> ReaderCa:
    """Files for a reader certificate the CA issued to the service's host, named in `settings` as an operator would."""
    ca = ca or reader_ca_create()
    key, chain = reader_files(ca, dns_name=urlsplit(settings.PUBLIC_BASE_URL).hostname, **validity)
    (directory / "reader.key").write_bytes(key)
    (directory / "reader-chain.pem").write_bytes(chain)
    settings.DIGITAL_ID_READER_KEY_FILE = str(directory / "reader.key")
    settings.DIGITAL_ID_READER_CHAIN_FILE = str(directory / "reader-chain.pem")
    return ca
