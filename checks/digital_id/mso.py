"""The Mobile Security Object (ISO 18013-5 9.1.2.4): what the issuer signed about one document."""

from __future__ import annotations

import datetime
import hashlib
from dataclasses import dataclass

import cbor2
from cryptography.hazmat.primitives.asymmetric import ec

from .cbor import cbor_decode, embedded_cbor, mapping, text_field
from .cose import cose_key_public
from .refusals import PresentationRefused, Refusal

DIGESTS = {"SHA-256": hashlib.sha256, "SHA-384": hashlib.sha384, "SHA-512": hashlib.sha512}
CLOCK_SKEW = datetime.timedelta(minutes=5)
MAX_DIGEST_ID = 2**31


@dataclass(frozen=True)
class SecurityObject:
    doc_type: str
    digest_algorithm: str
    value_digests: dict[str, dict[int, bytes]]
    device_key: ec.EllipticCurvePublicKey
    valid_from: datetime.datetime
    valid_until: datetime.datetime


def _instant(value: object) -> datetime.datetime:
    if not isinstance(value, datetime.datetime) or value.tzinfo is None:
        raise PresentationRefused(Refusal.MSO_MALFORMED, "validityInfo holds a time that is not tdate")
    return value


def mso_parse(payload: bytes | None) -> SecurityObject:
    """The MSO from issuerAuth's payload (`#6.24(bstr .cbor MobileSecurityObject)`)."""
    bad = Refusal.MSO_MALFORMED
    wrapped = cbor_decode(payload, malformed=bad)
    _, mso = embedded_cbor(wrapped, malformed=bad)
    mso = mapping(mso, malformed=bad, what="MSO")
    if mso.get("version") != "1.0":
        raise PresentationRefused(bad, "MSO version is not 1.0")
    digests = mapping(mso.get("valueDigests"), malformed=bad, what="valueDigests")
    value_digests = {}
    for namespace, by_id in digests.items():
        if not isinstance(namespace, str) or not isinstance(by_id, dict):
            raise PresentationRefused(bad, "valueDigests malformed")
        if not all(isinstance(k, int) and 0 <= k < MAX_DIGEST_ID and isinstance(v, bytes) for k, v in by_id.items()):
            raise PresentationRefused(bad, "valueDigests malformed")
        value_digests[namespace] = dict(by_id)
    device_key_info = mapping(mso.get("deviceKeyInfo"), malformed=bad, what="deviceKeyInfo")
    validity = mapping(mso.get("validityInfo"), malformed=bad, what="validityInfo")
    return SecurityObject(
        doc_type=text_field(mso, "docType", malformed=bad),
        digest_algorithm=text_field(mso, "digestAlgorithm", malformed=bad),
        value_digests=value_digests,
        device_key=cose_key_public(device_key_info.get("deviceKey"), malformed=bad),
        valid_from=_instant(validity.get("validFrom")),
        valid_until=_instant(validity.get("validUntil")),
    )


def mso_validate(mso: SecurityObject, *, doc_type: str, now: datetime.datetime) -> None:
    if mso.doc_type != doc_type:
        raise PresentationRefused(Refusal.MSO_DOC_TYPE_MISMATCH, f"MSO is for {mso.doc_type}, document says {doc_type}")
    if mso.digest_algorithm not in DIGESTS:
        raise PresentationRefused(Refusal.DIGEST_ALGORITHM, mso.digest_algorithm)
    if now + CLOCK_SKEW < mso.valid_from:
        raise PresentationRefused(Refusal.MSO_NOT_YET_VALID, f"valid from {mso.valid_from.isoformat()}")
    if now - CLOCK_SKEW > mso.valid_until:
        raise PresentationRefused(Refusal.MSO_EXPIRED, f"valid until {mso.valid_until.isoformat()}")


def issuer_items_verify(mso: SecurityObject, name_spaces: object) -> dict[str, dict[str, object]]:
    """Every returned IssuerSignedItem hashed against the MSO's digest: {namespace: {element: value}}."""
    bad = Refusal.RESPONSE_MALFORMED
    digest = DIGESTS[mso.digest_algorithm]
    verified: dict[str, dict[str, object]] = {}
    for namespace, items in mapping(name_spaces, malformed=bad, what="nameSpaces").items():
        if not isinstance(namespace, str) or not isinstance(items, list) or not items:
            raise PresentationRefused(bad, "issuer nameSpaces malformed")
        for tagged in items:
            _, item = embedded_cbor(tagged, malformed=bad)
            item = mapping(item, malformed=bad, what="IssuerSignedItem")
            identifier = text_field(item, "elementIdentifier", malformed=bad)
            digest_id = item.get("digestID")
            if (
                not isinstance(digest_id, int)
                or "elementValue" not in item
                or not isinstance(item.get("random"), bytes)
            ):
                raise PresentationRefused(bad, "IssuerSignedItem malformed")
            expected = mso.value_digests.get(namespace, {}).get(digest_id)
            # The digest covers the item as sent: the tag-24 wrapping of its exact bytes.
            if expected is None or digest(cbor2.dumps(tagged)).digest() != expected:
                raise PresentationRefused(Refusal.ITEM_DIGEST_MISMATCH, f"{namespace}/{identifier}")
            if identifier in verified.setdefault(namespace, {}):
                raise PresentationRefused(bad, f"{identifier} returned twice")
            verified[namespace][identifier] = item["elementValue"]
    return verified
