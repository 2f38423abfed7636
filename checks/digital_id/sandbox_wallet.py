"""A test issuer and a test wallet: mint mdocs and answer presentation requests like a phone would.

The sandbox's "Test wallet" button and the test suite use it; the verifier shares none of its
encoding code with it beyond the COSE key layout. The wallet side derives its session transcript
from the browser request it is handed (as a real wallet does), never from the server's state.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, hpke, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from joserfc import jwe
from joserfc.jwk import ECKey

from .cose import cose_key_from_public
from .request import NAMESPACES, PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP, b64url, b64url_decode
from .signed_request import PROTOCOL_OPENID4VP_SIGNED
from .trust import DOC_TYPES, MDOC_DOCUMENT_SIGNER_EKU, TrustAnchor

_EPOCH = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Issuer:
    root_key: ec.EllipticCurvePrivateKey
    root: x509.Certificate  # the IACA root, the trust anchor to configure
    signer_key: ec.EllipticCurvePrivateKey
    signer: x509.Certificate  # the document signer, sent in x5chain

    def anchor(self, *, doc_types=DOC_TYPES, sandbox: bool, source: str) -> TrustAnchor:
        return TrustAnchor(self.root, frozenset(doc_types), sandbox, source)


def _name(common_name: str, country: str) -> x509.Name:
    return x509.Name(
        [x509.NameAttribute(NameOID.COUNTRY_NAME, country), x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    )


def issuer_create(
    *,
    name: str = "Test IACA",
    country: str = "UT",
    root_key: ec.EllipticCurvePrivateKey | None = None,
    signer_key: ec.EllipticCurvePrivateKey | None = None,
    not_before: datetime.datetime = _EPOCH,
    not_after: datetime.datetime = _EPOCH + datetime.timedelta(days=3650),
    signer_eku: bool = True,
) -> Issuer:
    """An IACA root and a document signer it issued (ISO 18013-5 Annex B profile, in brief)."""
    root_key = root_key or ec.generate_private_key(ec.SECP256R1())
    signer_key = signer_key or ec.generate_private_key(ec.SECP256R1())
    root_name = _name(name, country)
    root = (
        x509.CertificateBuilder()
        .subject_name(root_name)
        .issuer_name(root_name)
        .public_key(root_key.public_key())
        .serial_number(1)
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(root_key, hashes.SHA256())
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(f"{name} document signer", country))
        .issuer_name(root_name)
        .public_key(signer_key.public_key())
        .serial_number(2)
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
    )
    if signer_eku:
        builder = builder.add_extension(x509.ExtendedKeyUsage([MDOC_DOCUMENT_SIGNER_EKU]), critical=True)
    else:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=True)
    return Issuer(root_key, root, signer_key, builder.sign(root_key, hashes.SHA256()))


def _derived_key(secret: bytes, label: bytes) -> ec.EllipticCurvePrivateKey:
    value = int.from_bytes(hmac.new(secret, label, hashlib.sha512).digest(), "big")
    order = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
    return ec.derive_private_key(value % (order - 1) + 1, ec.SECP256R1())


@functools.lru_cache(maxsize=4)
def sandbox_issuer(secret: bytes) -> Issuer:
    """The built-in test issuer: its keys follow from the server's secret, so every process agrees."""
    return issuer_create(
        name="AgeVerify sandbox IACA",
        country="UT",
        root_key=_derived_key(secret, b"sandbox-iaca"),
        signer_key=_derived_key(secret, b"sandbox-ds"),
    )


def cose_sign1_create(
    key: ec.EllipticCurvePrivateKey,
    payload: bytes | None,
    *,
    detached_payload: bytes | None = None,
    unprotected: dict | None = None,
) -> list:
    protected = cbor2.dumps({1: -7})
    signed = detached_payload if payload is None else payload
    der = key.sign(cbor2.dumps(["Signature1", protected, b"", signed]), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    return [protected, unprotected or {}, payload, r.to_bytes(32, "big") + s.to_bytes(32, "big")]


def document_mint(
    issuer: Issuer,
    *,
    doc_type: str,
    elements: dict[str, object],
    device_key: ec.EllipticCurvePrivateKey,
    transcript: list,
    valid_from: datetime.datetime,
    valid_until: datetime.datetime,
    namespace: str | None = None,
    tamper: bool = False,
) -> dict:
    """One Document: issuer-signed items with their MSO, and a device signature over `transcript`."""
    namespace = namespace or NAMESPACES.get(doc_type, doc_type)
    valid_from, valid_until = valid_from.replace(microsecond=0), valid_until.replace(microsecond=0)
    items, digests = [], {}
    for digest_id, (identifier, value) in enumerate(elements.items()):
        item = {
            "digestID": digest_id,
            "random": secrets.token_bytes(16),
            "elementIdentifier": identifier,
            "elementValue": value,
        }
        tagged = cbor2.CBORTag(24, cbor2.dumps(item))
        digests[digest_id] = hashlib.sha256(cbor2.dumps(tagged)).digest()
        if tamper:  # the holder flips the value after the issuer signed its digest
            item = {**item, "elementValue": (not value) if isinstance(value, bool) else value}
            tagged = cbor2.CBORTag(24, cbor2.dumps(item))
        items.append(tagged)
    mso = {
        "version": "1.0",
        "digestAlgorithm": "SHA-256",
        "docType": doc_type,
        "valueDigests": {namespace: digests},
        "deviceKeyInfo": {"deviceKey": cose_key_from_public(device_key.public_key())},
        "validityInfo": {"signed": valid_from, "validFrom": valid_from, "validUntil": valid_until},
    }
    mso_bytes = cbor2.dumps(cbor2.CBORTag(24, cbor2.dumps(mso)))
    issuer_auth = cose_sign1_create(
        issuer.signer_key, mso_bytes, unprotected={33: issuer.signer.public_bytes(serialization.Encoding.DER)}
    )
    device_name_spaces = cbor2.CBORTag(24, cbor2.dumps({}))
    authentication = cbor2.CBORTag(24, cbor2.dumps(["DeviceAuthentication", transcript, doc_type, device_name_spaces]))
    device_signature = cose_sign1_create(device_key, None, detached_payload=cbor2.dumps(authentication))
    return {
        "docType": doc_type,
        "issuerSigned": {"nameSpaces": {namespace: items}, "issuerAuth": issuer_auth},
        "deviceSigned": {"nameSpaces": device_name_spaces, "deviceAuth": {"deviceSignature": device_signature}},
    }


def device_response(*documents: dict) -> bytes:
    return cbor2.dumps({"version": "1.0", "documents": list(documents), "status": 0})


def _variant(browser_request: dict, protocol: str) -> dict:
    data = next(item["data"] for item in browser_request["requests"] if item["protocol"] == protocol)
    if protocol == PROTOCOL_OPENID4VP_SIGNED:  # the parameters are the signed request object's claims
        return json.loads(b64url_decode(data["request"].split(".")[1]))
    return data


def wallet_transcript(browser_request: dict, *, protocol: str, origin: str) -> list:
    """The session transcript as the wallet computes it from what the browser handed it."""
    data = _variant(browser_request, protocol)
    if protocol == PROTOCOL_ANNEX_C:
        digest = hashlib.sha256(cbor2.dumps([data["encryptionInfo"], origin])).digest()
        return [None, None, ["dcapi", digest]]
    jwk = data["client_metadata"]["jwks"]["keys"][0]
    thumbprint = hashlib.sha256(
        json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":")).encode()
    ).digest()
    digest = hashlib.sha256(cbor2.dumps([origin, data["nonce"], thumbprint])).digest()
    return [None, None, ["OpenID4VPDCAPIHandover", digest]]


def response_seal(browser_request: dict, *, protocol: str, origin: str, response: bytes) -> dict:
    """Encrypt a DeviceResponse to the request's key: the `data` of the DigitalCredential returned."""
    data = _variant(browser_request, protocol)
    if protocol == PROTOCOL_ANNEX_C:
        info = cbor2.loads(b64url_decode(data["encryptionInfo"]))[1]
        key = info["recipientPublicKey"]
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b"\x04" + key[-2] + key[-3])
        transcript = wallet_transcript(browser_request, protocol=protocol, origin=origin)
        sealed = hpke.Suite(hpke.KEM.P256, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_128_GCM).encrypt(
            response, public, info=cbor2.dumps(transcript)
        )
        envelope = ["dcapi", {"enc": sealed[:65], "cipherText": sealed[65:]}]
        return {"response": b64url(cbor2.dumps(envelope))}
    assert protocol in (PROTOCOL_OPENID4VP, PROTOCOL_OPENID4VP_SIGNED)
    jwk = data["client_metadata"]["jwks"]["keys"][0]
    query_id = data["dcql_query"]["credentials"][0]["id"]
    payload = json.dumps({"vp_token": {query_id: [b64url(response)]}})
    header = {"alg": "ECDH-ES", "enc": "A128GCM", "kid": jwk.get("kid", "1")}
    return {"response": jwe.encrypt_compact(header, payload, ECKey.import_key(jwk))}


def wallet_present(
    browser_request: dict,
    *,
    issuer: Issuer,
    protocol: str,
    origin: str,
    doc_type: str,
    elements: dict,
    now: datetime.datetime,
    valid_for: datetime.timedelta = datetime.timedelta(days=30),
) -> dict:
    """A whole wallet answer in one call: mint, device-sign over the wallet's transcript, seal."""
    document = document_mint(
        issuer,
        doc_type=doc_type,
        elements=elements,
        device_key=ec.generate_private_key(ec.SECP256R1()),
        transcript=wallet_transcript(browser_request, protocol=protocol, origin=origin),
        valid_from=now - datetime.timedelta(days=1),
        valid_until=now + valid_for,
    )
    return response_seal(browser_request, protocol=protocol, origin=origin, response=device_response(document))
