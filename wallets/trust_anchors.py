"""The issuer roots the digital-ID step trusts: the operator's, each scoped to doc types, plus the sandbox issuer.

Anchors come from PEM files or from trusted lists whose signature was verified (checks.digital_id.
trusted_list), through `manage.py trust_anchors`. Loading a source again replaces what that source
gave before (a refresh drops the issuers a list no longer names). The built-in sandbox issuer is
always present as a sandbox anchor, so test sessions can be tried without configuring anything;
checks.digital_id.trust refuses it on a live session with its own code.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from django.conf import settings
from django.db import transaction

from checks.digital_id.sandbox_wallet import sandbox_issuer
from checks.digital_id.trust import DOC_TYPES, TrustAnchor
from sessions_api.models import TrustAnchorRecord

SANDBOX_SOURCE = "sandbox"


def _fingerprint(certificate: x509.Certificate) -> str:
    return hashlib.sha256(certificate.public_bytes(serialization.Encoding.DER)).hexdigest()


@transaction.atomic
def trust_anchors_replace(
    *, source: str, issuers: Iterable[tuple[x509.Certificate, Iterable[str]]], sandbox: bool
) -> int:
    """Make `issuers` (certificate, doc types) the whole of what `source` vouches for; returns how many."""
    if source == SANDBOX_SOURCE:
        raise ValueError("the sandbox source is built in")
    TrustAnchorRecord.objects.filter(source=source).delete()
    records = {}
    for certificate, doc_types in issuers:
        scope = sorted(set(doc_types))
        if not scope or not set(scope) <= set(DOC_TYPES):
            raise ValueError(f"doc types must be among {DOC_TYPES}, got {scope}")
        fingerprint = _fingerprint(certificate)
        records[fingerprint] = TrustAnchorRecord(
            certificate_pem=certificate.public_bytes(serialization.Encoding.PEM).decode(),
            fingerprint=fingerprint,
            doc_types=sorted(set(scope) | set(records[fingerprint].doc_types if fingerprint in records else [])),
            sandbox=sandbox,
            source=source,
            subject=certificate.subject.rfc4514_string()[:300],
            not_after=certificate.not_valid_after_utc,
        )
    TrustAnchorRecord.objects.bulk_create(records.values())
    return len(records)


def _sandbox_anchor() -> TrustAnchor:
    return sandbox_issuer(settings.SECRET_KEY.encode()).anchor(doc_types=DOC_TYPES, sandbox=True, source=SANDBOX_SOURCE)


def trust_anchors_for(*, live: bool) -> list[TrustAnchor]:
    """Every anchor; for a live session the sandbox ones stay in only to be refused with their own code."""
    anchors = [
        TrustAnchor(
            x509.load_pem_x509_certificate(record.certificate_pem.encode()),
            frozenset(record.doc_types),
            record.sandbox,
            record.source,
        )
        for record in TrustAnchorRecord.objects.all()
    ]
    return [*anchors, _sandbox_anchor()]


def trusted_doc_types(*, live: bool) -> tuple[str, ...]:
    """The doc types a session of this mode can be approved with: those some usable anchor vouches for."""
    if not live:
        return DOC_TYPES
    scoped = set()
    for doc_types in TrustAnchorRecord.objects.filter(sandbox=False).values_list("doc_types", flat=True):
        scoped.update(doc_types)
    return tuple(doc_type for doc_type in DOC_TYPES if doc_type in scoped)
