"""Trusted lists of issuer roots, their own signature verified before any entry is believed.

VICAL (CBOR, COSE-signed) and ETSI TS 119 612 lists (XML, XML-signed; the EU lists' form) below.

VICAL (the AAMVA Verified Issuer Certificate Authority List for US mDLs, ISO 18013-5 form): a
COSE_Sign1 whose payload is {version, vicalProvider, date, certificateInfos: [{certificate, docType,
...}]}, signed by a VICAL signer certificate (x5chain) that the list provider's root issued. The
operator configures that provider root; a list whose signature, signer or root does not check out
yields no anchor at all.
"""

from __future__ import annotations

import base64
import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography import x509

from .cbor import cbor_decode, embedded_cbor
from .cose import ALGORITHMS, sign1_parse, sign1_verify, x5chain
from .refusals import PresentationRefused
from .trust import DOC_TYPES, issued_by

MAX_LIST_BYTES = 4 * 1024 * 1024
MAX_ENTRIES = 2000


class TrustedListRejected(Exception):
    """The list is malformed, or its signature does not lead to the configured provider root."""


@dataclass(frozen=True)
class ListedIssuer:
    certificate: x509.Certificate
    doc_types: frozenset[str]


def _decode(data: bytes):
    # A list is larger than a presentation: its own caps.
    return cbor_decode(data, malformed="trusted_list_malformed", max_bytes=MAX_LIST_BYTES, max_items=MAX_ENTRIES * 16)


def vical_verify(
    data: bytes, *, provider_roots: Sequence[x509.Certificate], now: datetime.datetime
) -> tuple[str, list[ListedIssuer]]:
    """The provider's name and the listed issuer roots of a VICAL whose signature verifies."""
    if len(data) > MAX_LIST_BYTES:
        raise TrustedListRejected("the list is larger than 4 MiB")
    try:
        signed = sign1_parse(_decode(data), malformed="trusted_list_malformed")
        chain = x5chain(signed, malformed="trusted_list_malformed")
    except PresentationRefused as refused:
        raise TrustedListRejected(refused.detail or refused.code) from None
    if signed.algorithm not in ALGORITHMS or signed.payload is None:
        raise TrustedListRejected("the list's signature algorithm is not allowed, or its payload is detached")
    signer = chain[0]
    if not signer.not_valid_before_utc <= now <= signer.not_valid_after_utc:
        raise TrustedListRejected("the list's signer certificate is outside its validity")
    if not any(
        issued_by(signer, root) and root.not_valid_before_utc <= now <= root.not_valid_after_utc
        for root in provider_roots
    ):
        raise TrustedListRejected("the list's signer was not issued by a configured provider root")
    if not sign1_verify(signed, signer.public_key(), payload=signed.payload):
        raise TrustedListRejected("the list's signature does not verify")
    try:
        payload = _decode(signed.payload)
        if not isinstance(payload, dict):  # some lists wrap the payload in tag 24
            payload = embedded_cbor(payload, malformed="trusted_list_malformed")[1]
    except PresentationRefused:
        raise TrustedListRejected("the list's payload is not CBOR") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("certificateInfos"), list):
        raise TrustedListRejected("the list has no certificateInfos")
    issuers = []
    for info in payload["certificateInfos"][:MAX_ENTRIES]:
        if not isinstance(info, dict) or not isinstance(info.get("certificate"), bytes):
            raise TrustedListRejected("an entry has no certificate")
        doc_types = (
            frozenset(d for d in info.get("docType", []) if d in DOC_TYPES)
            if isinstance(info.get("docType"), list)
            else frozenset()
        )
        if doc_types:  # entries for doc types this service does not verify are skipped
            try:
                issuers.append(ListedIssuer(x509.load_der_x509_certificate(info["certificate"]), doc_types))
            except ValueError:
                raise TrustedListRejected("an entry's certificate does not parse") from None
    provider = payload.get("vicalProvider")
    return (provider if isinstance(provider, str) else "unknown"), issuers


# ETSI TS 119 612 trusted lists (the form of the EU lists, age verification attestation providers
# included): XML, an enveloped XML signature (XAdES) by the scheme operator. Only what the signature
# covers is read, and only services whose status is "granted".
TSL_NAMESPACE = "http://uri.etsi.org/02231/v2#"
TSL_GRANTED = "http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted"
_TSL = {"tsl": TSL_NAMESPACE}


def etsi_list_verify(
    data: bytes, *, operator_certificates: Sequence[x509.Certificate], now: datetime.datetime, doc_types: Sequence[str]
) -> tuple[str, list[ListedIssuer]]:
    """The scheme operator's name and the granted services' certificates of a list its operator signed."""
    from signxml import SignatureConfiguration, XMLVerifier
    from signxml.exceptions import SignXMLException

    if len(data) > MAX_LIST_BYTES:
        raise TrustedListRejected("the list is larger than 4 MiB")
    if not doc_types or not set(doc_types) <= set(DOC_TYPES):
        raise TrustedListRejected(f"doc types must be among {DOC_TYPES}")
    # XAdES adds a second signed reference (its SignedProperties): accept any count, read the list's own.
    config = SignatureConfiguration(expect_references=True)
    signed, last_error = None, "no operator certificate is in its validity"
    for certificate in operator_certificates:
        if not certificate.not_valid_before_utc <= now <= certificate.not_valid_after_utc:
            continue
        try:
            results = XMLVerifier().verify(data, x509_cert=certificate, expect_config=config)
        except (SignXMLException, ValueError, SyntaxError) as error:  # lxml's parse errors are SyntaxErrors
            last_error = str(error)
            continue
        results = results if isinstance(results, list) else [results]
        signed = next(
            (
                r.signed_xml
                for r in results
                if r.signed_xml is not None and r.signed_xml.tag == f"{{{TSL_NAMESPACE}}}TrustServiceStatusList"
            ),
            None,
        )
        if signed is not None:
            break
        last_error = "the signature does not cover the list"
    if signed is None:
        raise TrustedListRejected(f"the list's signature does not verify with the operator certificate ({last_error})")
    next_update = signed.findtext("tsl:SchemeInformation/tsl:NextUpdate/tsl:dateTime", namespaces=_TSL)
    if next_update:
        try:
            due = datetime.datetime.fromisoformat(next_update.strip().replace("Z", "+00:00"))
        except ValueError:
            raise TrustedListRejected("the list's NextUpdate is not a date") from None
        if due.tzinfo is None or due < now:
            raise TrustedListRejected(f"the list is stale: its next update was due {next_update.strip()}")
    issuers = []
    scope = frozenset(doc_types)
    services = signed.findall(".//tsl:TSPService/tsl:ServiceInformation", namespaces=_TSL)
    for service in services[:MAX_ENTRIES]:
        if (service.findtext("tsl:ServiceStatus", namespaces=_TSL) or "").strip() != TSL_GRANTED:
            continue
        for encoded in service.iterfind(
            "tsl:ServiceDigitalIdentity/tsl:DigitalId/tsl:X509Certificate", namespaces=_TSL
        ):
            try:
                issuers.append(
                    ListedIssuer(x509.load_der_x509_certificate(base64.b64decode(encoded.text or "")), scope)
                )
            except ValueError:
                raise TrustedListRejected("a service's certificate does not parse") from None
    operator = signed.findtext("tsl:SchemeInformation/tsl:SchemeOperatorName/tsl:Name", namespaces=_TSL)
    return (operator or "unknown").strip(), issuers
