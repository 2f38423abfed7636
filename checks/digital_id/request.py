"""A single-use presentation request: what the browser is asked for, and the server-side state it needs.

The browser gets one `navigator.credentials.get` argument with two variants: OpenID4VP 1.0 unsigned
with `response_mode` `dc_api.jwt` (DCQL), and ISO 18013-7 Annex C `org-iso-mdoc`. Both encrypt the
response to this request's own ephemeral P-256 key, and both bind the wallet's device signature to
the nonce and the page's origin through the session transcript (`transcript.py`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass

import cbor2
from cryptography.hazmat.primitives.asymmetric import ec

from .cose import cose_key_from_public
from .trust import DOC_TYPES, EU_AGE_ATTESTATION, MOBILE_DRIVING_LICENCE

PROTOCOL_OPENID4VP = "openid4vp-v1-unsigned"
PROTOCOL_ANNEX_C = "org-iso-mdoc"
# Not a Digital Credentials API protocol: the cross-device request (`request_uri`, `direct_post.jwt`), cross_device.py.
PROTOCOL_OPENID4VP_CROSS_DEVICE = "openid4vp-v1-request-uri"
REQUEST_LIFETIME_SECONDS = 5 * 60
# Where each doc type keeps its age_over_NN elements.
NAMESPACES = {EU_AGE_ATTESTATION: "eu.europa.ec.av.1", MOBILE_DRIVING_LICENCE: "org.iso.18013.5.1"}
ALGORITHMS_OFFERED = [-7, -35, -36]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    if not isinstance(text, str) or not text.isascii() or "=" in text:
        raise ValueError("not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class WalletRequest:
    nonce: bytes
    private_key: ec.EllipticCurvePrivateKey
    origin: str  # the flow page's origin, as the browser will report it to the wallet
    doc_types: tuple[str, ...]
    age_limit: int
    # Cross-device only: the verifier's client identifier, where the wallet posts its answer, and the state it echoes.
    client_id: str = ""
    response_uri: str = ""
    state: str = ""

    @property
    def nonce_text(self) -> str:
        return b64url(self.nonce)

    def public_jwk(self) -> dict:
        cose = cose_key_from_public(self.private_key.public_key())
        return {"kty": "EC", "crv": "P-256", "x": b64url(cose[-2]), "y": b64url(cose[-3])}

    def jwk_thumbprint(self) -> bytes:
        """RFC 7638 SHA-256 thumbprint: the required members in lexicographic order, no whitespace."""
        jwk = self.public_jwk()
        canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).digest()

    def encryption_info(self) -> str:
        """Annex C EncryptionInfo, base64url: ["dcapi", {nonce, recipientPublicKey}]."""
        info = [
            "dcapi",
            {"nonce": self.nonce, "recipientPublicKey": cose_key_from_public(self.private_key.public_key())},
        ]
        return b64url(cbor2.dumps(info))


def wallet_request_new(
    *,
    origin: str,
    doc_types: tuple[str, ...],
    age_limit: int,
    client_id: str = "",
    response_uri: str = "",
) -> WalletRequest:
    if not doc_types or not set(doc_types) <= set(DOC_TYPES):
        raise ValueError(f"doc types must be among {DOC_TYPES}")
    return WalletRequest(
        secrets.token_bytes(32),
        ec.generate_private_key(ec.SECP256R1()),
        origin,
        tuple(doc_types),
        age_limit,
        client_id=client_id,
        response_uri=response_uri,
        state=secrets.token_urlsafe(24) if response_uri else "",
    )


def wallet_request_dump(request: WalletRequest) -> dict:
    """The request's server-side state as JSON-safe values (to keep until the response arrives)."""
    secret = request.private_key.private_numbers().private_value.to_bytes(32, "big")
    return {
        "nonce": b64url(request.nonce),
        "key": b64url(secret),
        "origin": request.origin,
        "docTypes": list(request.doc_types),
        "ageLimit": request.age_limit,
        **(
            {"clientId": request.client_id, "responseUri": request.response_uri, "state": request.state}
            if request.response_uri
            else {}
        ),
    }


def wallet_request_load(state: dict) -> WalletRequest:
    key = ec.derive_private_key(int.from_bytes(b64url_decode(state["key"]), "big"), ec.SECP256R1())
    return WalletRequest(
        b64url_decode(state["nonce"]),
        key,
        state["origin"],
        tuple(state["docTypes"]),
        int(state["ageLimit"]),
        client_id=state.get("clientId", ""),
        response_uri=state.get("responseUri", ""),
        state=state.get("state", ""),
    )


def age_claims(age_limit: int) -> list[str]:
    """The elements asked for: age_over_{limit}, and age_over_18 too where 18 also proves the limit."""
    claims = [f"age_over_{age_limit:02d}"]
    if age_limit < 18:
        claims.append("age_over_18")
    return claims


def _dcql_query(request: WalletRequest) -> dict:
    credentials, options = [], []
    for index, doc_type in enumerate(request.doc_types):
        namespace = NAMESPACES[doc_type]
        claims = [
            {"id": claim, "path": [namespace, claim], "intent_to_retain": False}
            for claim in age_claims(request.age_limit)
        ]
        query_id = f"age{index}"
        credentials.append(
            {
                "id": query_id,
                "format": "mso_mdoc",
                "meta": {"doctype_value": doc_type},
                "claims": claims,
                "claim_sets": [[claim["id"]] for claim in claims],
            }
        )
        options.append([query_id])
    return {"credentials": credentials, "credential_sets": [{"options": options}]}


def _openid4vp_data(request: WalletRequest) -> dict:
    jwk = {**request.public_jwk(), "use": "enc", "alg": "ECDH-ES", "kid": "1"}
    return {
        "response_type": "vp_token",
        "response_mode": "dc_api.jwt",
        "nonce": request.nonce_text,
        "dcql_query": _dcql_query(request),
        "client_metadata": {
            "jwks": {"keys": [jwk]},
            "encrypted_response_enc_values_supported": ["A128GCM"],
            "vp_formats_supported": {
                "mso_mdoc": {"issuerauth_alg_values": ALGORITHMS_OFFERED, "deviceauth_alg_values": ALGORITHMS_OFFERED}
            },
        },
    }


def _annex_c_data(request: WalletRequest, reader_auth: Callable[[bytes], list] | None = None) -> dict:
    """Annex C's DeviceRequest and EncryptionInfo; `reader_auth(ItemsRequestBytes)` signs each doc request."""
    doc_requests = []
    for doc_type in request.doc_types:
        items = {
            "docType": doc_type,
            "nameSpaces": {NAMESPACES[doc_type]: {claim: False for claim in age_claims(request.age_limit)}},
        }
        items_bytes = cbor2.dumps(items)
        doc_request = {"itemsRequest": cbor2.CBORTag(24, items_bytes)}
        if reader_auth is not None:
            doc_request["readerAuth"] = reader_auth(items_bytes)
        doc_requests.append(doc_request)
    device_request = {"version": "1.0", "docRequests": doc_requests}
    return {"deviceRequest": b64url(cbor2.dumps(device_request)), "encryptionInfo": request.encryption_info()}


def browser_request(request: WalletRequest) -> dict:
    """The `digital` member of the `navigator.credentials.get` argument."""
    return {
        "requests": [
            {"protocol": PROTOCOL_OPENID4VP, "data": _openid4vp_data(request)},
            {"protocol": PROTOCOL_ANNEX_C, "data": _annex_c_data(request)},
        ]
    }
