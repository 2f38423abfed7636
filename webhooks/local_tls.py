"""A local certificate authority and a receiver certificate, for webhook receivers on this machine.

Used by `manage.py webhook_receiver` (the local webhook recipe of docs/webhooks.md) and the tests' receiver. The
sender trusts the local CA through `WEBHOOK_CA_BUNDLE`; `trust_bundle_write` puts it beside the
system's authorities, so public receivers keep verifying as before.
"""

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOCAL_NAMES = ("localhost",)
LOCAL_ADDRESSES = ("127.0.0.1", "::1")


@dataclass(frozen=True)
class TlsFiles:
    ca_bundle: Path  # the local CA alone
    cert_chain: Path  # the receiver's certificate, then the CA's
    key: Path


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=ca,
        crl_sign=ca,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )


def tls_files_make(
    directory: Path, *, dns_names=LOCAL_NAMES, days: int = 2, ca_name: str = "AgeVerify local webhook CA"
) -> TlsFiles:
    """A new CA and a server certificate it signed for `dns_names`, 127.0.0.1 and ::1, valid `days` days."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    valid = {
        "not_valid_before": now - datetime.timedelta(minutes=5),
        "not_valid_after": now + datetime.timedelta(days=days),
    }
    ca_key = ec.generate_private_key(ec.SECP256R1())
    issuer = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ca_name)])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(issuer)
        .issuer_name(issuer)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid["not_valid_before"])
        .not_valid_after(valid["not_valid_after"])
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(ca=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName(name) for name in dns_names]
    names += [x509.IPAddress(ipaddress.ip_address(address)) for address in LOCAL_ADDRESSES]
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns_names[0])]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid["not_valid_before"])
        .not_valid_after(valid["not_valid_after"])
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    files.ca_bundle.write_bytes(ca_cert.public_bytes(pem))
    files.cert_chain.write_bytes(cert.public_bytes(pem) + ca_cert.public_bytes(pem))
    files.key.touch(mode=0o600)
    files.key.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return files


def tls_files_current(directory: Path, *, days: int = 365) -> TlsFiles:
    """The local receiver's files in `directory`, made anew when missing or within a day of expiring."""
    files = TlsFiles(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    try:
        cert = x509.load_pem_x509_certificate(files.cert_chain.read_bytes())
        fresh = cert.not_valid_after_utc > datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1)
    except (OSError, ValueError):
        fresh = False
    if fresh and files.key.exists() and files.ca_bundle.exists():
        return files
    return tls_files_make(directory, days=days)


def trust_bundle_write(ca_file: Path, target: Path) -> Path:
    """`target`: the system's certificate authorities followed by the local one (a WEBHOOK_CA_BUNDLE)."""
    system = ssl.get_default_verify_paths().cafile
    system_pems = Path(system).read_bytes() if system and Path(system).exists() else b""
    target.write_bytes(system_pems.rstrip(b"\n") + b"\n" + ca_file.read_bytes())
    return target
