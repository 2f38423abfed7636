"""Verifying one wallet presentation against one single-use request: every step fail-closed.

Order: protocol -> envelope -> DeviceResponse -> one document of an allowed doc type -> issuerAuth
(pinned algorithm, x5chain) -> path to an anchor for that doc type and mode -> MSO signature -> MSO
doc type, digest algorithm, validity -> each returned item's digest -> device signature over the
transcript with the MSO's device key -> age resolution (ISO 18013-5 7.2.5).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Collection, Iterable

import cbor2

from ..results import AgeCredential
from .cbor import cbor_decode, embedded_cbor, mapping, text_field
from .cose import ALGORITHMS, sign1_parse, sign1_verify, x5chain
from .envelope import annex_c_open, openid4vp_open
from .mso import issuer_items_verify, mso_parse, mso_validate
from .refusals import PresentationRefused, Refusal
from .request import NAMESPACES, PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP, PROTOCOL_OPENID4VP_CROSS_DEVICE, WalletRequest
from .signed_request import PROTOCOL_OPENID4VP_SIGNED
from .transcript import session_transcript
from .trust import TrustAnchor, issuer_path_verify

_PROTOCOLS = {False: (PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP), True: (PROTOCOL_OPENID4VP_CROSS_DEVICE,)}
_AGE_OVER = re.compile(r"^age_over_(\d{2})$")


def _one_document(device_response: object, request: WalletRequest) -> dict:
    bad = Refusal.RESPONSE_MALFORMED
    response = mapping(device_response, malformed=bad, what="DeviceResponse")
    if response.get("version") != "1.0" or response.get("status") != 0:
        raise PresentationRefused(bad, "DeviceResponse version or status")
    documents = response.get("documents")
    if not isinstance(documents, list) or len(documents) != 1:
        raise PresentationRefused(Refusal.DOCUMENT_COUNT, "exactly one document is expected")
    document = mapping(documents[0], malformed=bad, what="Document")
    if text_field(document, "docType", malformed=bad) not in request.doc_types:
        raise PresentationRefused(Refusal.DOC_TYPE_NOT_ALLOWED, document["docType"])
    return document


def _device_signature_verify(document: dict, mso, transcript: list) -> None:
    bad = Refusal.RESPONSE_MALFORMED
    device_signed = mapping(document.get("deviceSigned"), malformed=Refusal.DEVICE_AUTH_MISSING, what="deviceSigned")
    name_spaces_tag = device_signed.get("nameSpaces")
    embedded_cbor(name_spaces_tag, malformed=bad)
    device_auth = mapping(device_signed.get("deviceAuth"), malformed=Refusal.DEVICE_AUTH_MISSING, what="deviceAuth")
    if "deviceMac" in device_auth:
        raise PresentationRefused(Refusal.DEVICE_MAC_UNSUPPORTED, "only deviceSignature is accepted")
    if set(device_auth) != {"deviceSignature"}:
        raise PresentationRefused(Refusal.DEVICE_AUTH_MISSING, "no deviceSignature")
    signature = sign1_parse(device_auth["deviceSignature"], malformed=Refusal.DEVICE_SIGNATURE_INVALID)
    if signature.payload is not None:
        raise PresentationRefused(Refusal.DEVICE_SIGNATURE_INVALID, "the device signature's payload must be detached")
    authentication = ["DeviceAuthentication", transcript, document["docType"], name_spaces_tag]
    payload = cbor2.dumps(cbor2.CBORTag(24, cbor2.dumps(authentication)))
    if not sign1_verify(signature, mso.device_key, payload=payload):
        raise PresentationRefused(Refusal.DEVICE_SIGNATURE_INVALID, "not over this request's session transcript")


def _age_resolve(elements: dict[str, object], age_limit: int) -> tuple[str | None, bool | None, str]:
    """ISO 18013-5 7.2.5: age_over_M true with M >= limit proves it; false with M <= limit disproves it."""
    proofs = sorted(
        (int(m.group(1)), name, value)
        for name, value in elements.items()
        if (m := _AGE_OVER.match(name)) and isinstance(value, bool)
    )
    over = [(m, name) for m, name, value in proofs if value and m >= age_limit]
    if over:
        return min(over)[1], True, "over"
    under = [(m, name) for m, name, value in proofs if not value and m <= age_limit]
    if under:
        return max(under)[1], False, "under"
    return None, None, "inconclusive"


def presentation_verify(
    *,
    request: WalletRequest,
    protocol: str,
    data: object,
    anchors: Iterable[TrustAnchor],
    live: bool,
    now: datetime.datetime,
    offered: Collection[str] | None = None,
) -> AgeCredential:
    """The age credential a presentation proves, or `PresentationRefused` naming the failed step.

    `offered`: the protocols the browser was asked for (signed_request.py); unset, the unsigned pair."""
    if offered is not None:
        if protocol not in offered:
            raise PresentationRefused(Refusal.PROTOCOL_NOT_REQUESTED, str(protocol)[:40])
        if protocol == PROTOCOL_OPENID4VP_SIGNED:  # only the request was signed: the answer is the unsigned one's
            protocol = PROTOCOL_OPENID4VP
    # A cross-device request is answered only by its own protocol, and a browser's request never by that one.
    if protocol not in _PROTOCOLS[bool(request.response_uri)]:
        raise PresentationRefused(Refusal.PROTOCOL_NOT_REQUESTED, str(protocol)[:40])
    transcript = session_transcript(request, protocol)
    if protocol == PROTOCOL_ANNEX_C:
        plaintext = annex_c_open(data, request, transcript)
    else:
        plaintext = openid4vp_open(data, request)
    device_response = cbor_decode(plaintext, malformed=Refusal.RESPONSE_MALFORMED)
    document = _one_document(device_response, request)
    doc_type = document["docType"]

    issuer_signed = mapping(document.get("issuerSigned"), malformed=Refusal.RESPONSE_MALFORMED, what="issuerSigned")
    issuer_auth = sign1_parse(issuer_signed.get("issuerAuth"), malformed=Refusal.ISSUER_AUTH_MALFORMED)
    if issuer_auth.algorithm not in ALGORITHMS:
        raise PresentationRefused(Refusal.ISSUER_ALGORITHM, repr(issuer_auth.algorithm)[:20])
    chain = x5chain(issuer_auth, malformed=Refusal.ISSUER_CHAIN_MISSING)
    anchor = issuer_path_verify(chain, anchors, doc_type=doc_type, live=live, now=now)
    if issuer_auth.payload is None or not sign1_verify(issuer_auth, chain[0].public_key(), payload=issuer_auth.payload):
        raise PresentationRefused(Refusal.ISSUER_SIGNATURE_INVALID, "MSO signature does not verify")

    mso = mso_parse(issuer_auth.payload)
    mso_validate(mso, doc_type=doc_type, now=now)
    elements = issuer_items_verify(mso, issuer_signed.get("nameSpaces"))
    _device_signature_verify(document, mso, transcript)

    claim, value, outcome = _age_resolve(elements.get(NAMESPACES[doc_type], {}), request.age_limit)
    return AgeCredential(
        doc_type=doc_type,
        claim=claim,
        value=value,
        age_limit=request.age_limit,
        issuer_country=anchor.country,
        trust_source=anchor.source,
        outcome=outcome,
    )
