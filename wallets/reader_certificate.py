"""The operator's reader certificate as configured: files named by settings, read here, never stored in the database.

`reader_identity()` is the configured key and chain (re-read when a file changes, so an imported chain
takes effect without a restart); `request_object_sign` and `reader_auth_sign` sign with it and refuse,
with `ReaderCertificateRefused`, when the chain does not hold now. `reader_certificate_status()` is what
`/readyz` and the admin say about it, warning `DIGITAL_ID_READER_WARN_DAYS` before expiry.
"""

from __future__ import annotations

import datetime
import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.x509.oid import NameOID
from django.conf import settings
from django.utils import timezone

from checks.digital_id import reader
from checks.digital_id.reader import ReaderCertificateRefused, ReaderIdentity

_cache: dict[bytes, ReaderIdentity] = {}
_cache_lock = threading.Lock()


class ReaderNotConfigured(Exception):
    """No reader key and chain are configured: requests cannot be signed."""


def reader_files() -> tuple[Path, Path] | None:
    key, chain = settings.DIGITAL_ID_READER_KEY_FILE, settings.DIGITAL_ID_READER_CHAIN_FILE
    if not key or not chain:
        return None
    return Path(key), Path(chain)


def reader_identity() -> ReaderIdentity:
    """The configured key and chain, parsed (not checked: signing checks); raises when unset or unreadable."""
    files = reader_files()
    if files is None:
        raise ReaderNotConfigured("DIGITAL_ID_READER_KEY_FILE and DIGITAL_ID_READER_CHAIN_FILE are not both set")
    try:
        key_pem, chain_pem = files[0].read_bytes(), files[1].read_bytes()
    except OSError as error:
        raise ReaderCertificateRefused(ReaderCertificateRefused.UNREADABLE, str(error)) from None
    # Two small files read on each use; parsing happens once per content (a renewed chain is seen at once).
    stamp = hashlib.sha256(key_pem + b"\0" + chain_pem).digest()
    with _cache_lock:
        if stamp in _cache:
            return _cache[stamp]
    identity = reader.reader_identity_load(key_pem=key_pem, chain_pem=chain_pem)
    with _cache_lock:
        _cache.clear()
        _cache[stamp] = identity
    return identity


def service_host() -> str:
    return urlsplit(settings.PUBLIC_BASE_URL).hostname or ""


def reader_client_id(identity: ReaderIdentity) -> str:
    """The client identifier signed requests carry: `DIGITAL_ID_CLIENT_ID_SCHEME` over the service's host."""
    if settings.DIGITAL_ID_CLIENT_ID_SCHEME == reader.CLIENT_ID_HASH:
        return identity.client_id(reader.CLIENT_ID_HASH)
    return identity.client_id(reader.CLIENT_ID_SAN_DNS, dns_name=service_host())


def request_object_sign(claims: dict, *, now: datetime.datetime | None = None) -> tuple[str, str]:
    """(client_id, signed request object) for `claims`, with the configured reader certificate."""
    identity = reader_identity()
    client_id = reader_client_id(identity)
    return client_id, reader.request_object_sign(
        claims, identity=identity, client_id=client_id, now=now or timezone.now()
    )


def reader_auth_sign(*, session_transcript: list, items_request_bytes: bytes, now: datetime.datetime | None = None):
    """Annex C `readerAuth` over one ItemsRequest, with the configured reader certificate."""
    return reader.reader_auth_sign(
        identity=reader_identity(),
        session_transcript=session_transcript,
        items_request_bytes=items_request_bytes,
        now=now or timezone.now(),
    )


@dataclass(frozen=True)
class ReaderCertificateStatus:
    state: str  # "unset", "ok", "expiring" (can sign, renew soon) or "refused" (cannot sign)
    detail: str
    expires_at: datetime.datetime | None = None

    @property
    def can_sign(self) -> bool:
        return self.state in ("ok", "expiring")


def reader_certificate_status(
    *, identity: ReaderIdentity | None = None, now: datetime.datetime | None = None
) -> ReaderCertificateStatus:
    """What the configured (or the given) key and chain can do now, and how long until they expire."""
    now = now or timezone.now()
    try:
        identity = identity or reader_identity()
        reader.reader_identity_check(identity, now=now)
        reader_client_id(identity)
    except ReaderNotConfigured as unset:
        return ReaderCertificateStatus("unset", str(unset))
    except ReaderCertificateRefused as refused:
        return ReaderCertificateStatus("refused", str(refused))
    expires_at = identity.expires_at
    left = expires_at - now
    if left <= datetime.timedelta(days=settings.DIGITAL_ID_READER_WARN_DAYS):
        return ReaderCertificateStatus(
            "expiring", f"the reader certificate expires on {expires_at:%Y-%m-%d} ({left.days} days)", expires_at
        )
    return ReaderCertificateStatus("ok", f"valid until {expires_at:%Y-%m-%d}", expires_at)


@dataclass(frozen=True)
class WalletFamily:
    name: str
    served: bool
    why: str


def _organizations(name: x509.Name) -> list[str]:
    return [str(attribute.value) for attribute in name.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def wallet_families(identity: ReaderIdentity) -> list[WalletFamily]:
    """Which wallets this chain can serve, as far as the certificate itself tells (docs/digital-id.md)."""
    host = service_host()
    names = identity.dns_names
    issuer = identity.chain[-1] if len(identity.chain) > 1 else identity.leaf
    issuer_orgs = _organizations(identity.leaf.issuer) + _organizations(issuer.subject)
    from_apple = any(org.startswith("Apple") for org in issuer_orgs)
    san_dns = host in names
    openid4vp_why = (
        f"signed OpenID4VP with x509_san_dns:{host}"
        if san_dns
        else f"the leaf's SAN DNS names {names} lack {host}: only x509_hash requests can be signed"
    )
    return [
        WalletFamily(
            "Apple Wallet (ISO 18013-7 Annex C with readerAuth)",
            from_apple,
            "issued by Apple" if from_apple else "Apple Wallet answers only a reader certificate Apple issued",
        ),
        WalletFamily("EU reference wallet and HAIP wallets", True, openid4vp_why),
        WalletFamily("Google Wallet (signed OpenID4VP)", True, openid4vp_why),
    ]
