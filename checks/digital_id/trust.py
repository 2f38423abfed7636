"""Trust anchors (IACA roots) scoped per doc type and mode, and the document signer's path to one.

ISO 18013-5 Annex B has two tiers: the issuing authority's root (IACA) signs document signer
certificates directly. A document signer is accepted only when an anchor configured for the
presented doc type issued it, both certificates are in their validity period, the root is a CA
allowed to sign certificates and the signer carries the mdoc document-signer extended key usage.
A sandbox anchor never vouches for a live session.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import NameOID

from .refusals import PresentationRefused, Refusal

MDOC_DOCUMENT_SIGNER_EKU = x509.ObjectIdentifier("1.0.18013.5.1.2")
EU_AGE_ATTESTATION = "eu.europa.ec.av.1"
MOBILE_DRIVING_LICENCE = "org.iso.18013.5.1.mDL"
DOC_TYPES = (EU_AGE_ATTESTATION, MOBILE_DRIVING_LICENCE)


@dataclass(frozen=True)
class TrustAnchor:
    certificate: x509.Certificate
    doc_types: frozenset[str]
    sandbox: bool  # a test issuer's root: approves sandbox sessions only
    source: str  # where the operator took it from: "pem:<file>", "eu-av-list", "vical", "sandbox"

    @property
    def country(self) -> str | None:
        values = self.certificate.subject.get_attributes_for_oid(NameOID.COUNTRY_NAME)
        return str(values[0].value) if values else None


def anchors_from_pem(pem: bytes, *, doc_types: Iterable[str], sandbox: bool, source: str) -> list[TrustAnchor]:
    """Every certificate of a PEM bundle as an anchor for `doc_types`; a bundle without any is an error."""
    certificates = x509.load_pem_x509_certificates(pem)
    scope = frozenset(doc_types)
    if not scope or not scope <= set(DOC_TYPES):
        raise ValueError(f"doc types must be among {DOC_TYPES}, got {sorted(scope)}")
    return [TrustAnchor(certificate, scope, sandbox, source) for certificate in certificates]


def issued_by(certificate: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        certificate.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _in_validity(certificate: x509.Certificate, now: datetime.datetime) -> bool:
    return certificate.not_valid_before_utc <= now <= certificate.not_valid_after_utc


def _extension(certificate: x509.Certificate, kind):
    try:
        return certificate.extensions.get_extension_for_class(kind).value
    except x509.ExtensionNotFound:
        return None


def _anchor_fit(anchor: x509.Certificate, now: datetime.datetime) -> bool:
    constraints = _extension(anchor, x509.BasicConstraints)
    usage = _extension(anchor, x509.KeyUsage)
    return bool(_in_validity(anchor, now) and constraints and constraints.ca and usage and usage.key_cert_sign)


def _signer_fit(signer: x509.Certificate, now: datetime.datetime) -> bool:
    constraints = _extension(signer, x509.BasicConstraints)
    usage = _extension(signer, x509.KeyUsage)
    purposes = _extension(signer, x509.ExtendedKeyUsage)
    return bool(
        _in_validity(signer, now)
        and not (constraints and constraints.ca)
        and usage
        and usage.digital_signature
        and purposes
        and MDOC_DOCUMENT_SIGNER_EKU in purposes
    )


def issuer_path_verify(
    chain: Sequence[x509.Certificate],
    anchors: Iterable[TrustAnchor],
    *,
    doc_type: str,
    live: bool,
    now: datetime.datetime,
) -> TrustAnchor:
    """The anchor that vouches for the document signer `chain[0]` for `doc_type`, or a refusal."""
    signer = chain[0]
    issuers = [anchor for anchor in anchors if doc_type in anchor.doc_types and issued_by(signer, anchor.certificate)]
    if not issuers:
        raise PresentationRefused(
            Refusal.ISSUER_UNTRUSTED, f"no {doc_type} anchor issued {signer.issuer.rfc4514_string()}"
        )
    if live:
        if all(anchor.sandbox for anchor in issuers):
            raise PresentationRefused(Refusal.SANDBOX_ISSUER_ON_LIVE, "only a sandbox anchor vouches for this issuer")
        issuers = [anchor for anchor in issuers if not anchor.sandbox]
    anchor = next((anchor for anchor in issuers if _anchor_fit(anchor.certificate, now)), None)
    if anchor is None or not _signer_fit(signer, now):
        raise PresentationRefused(
            Refusal.ISSUER_CERTIFICATE_INVALID, "certificate out of its validity or without the mdoc key usages"
        )
    return anchor
