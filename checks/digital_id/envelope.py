"""Opening the encrypted response: HPKE for Annex C, a JWE (ECDH-ES) for OpenID4VP dc_api.jwt.

HPKE suite per ISO 18013-7 Annex C: DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, base mode,
info = the CBOR session transcript. A well-formed envelope that does not open under the request's
key was made for another request (a replay): it gets its own code.
"""

from __future__ import annotations

import json

import cbor2
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hpke
from joserfc import jwe
from joserfc.errors import JoseError
from joserfc.jwk import ECKey

from .cbor import MAX_BYTES, cbor_decode
from .refusals import PresentationRefused, Refusal
from .request import WalletRequest, b64url_decode

_SUITE = hpke.Suite(hpke.KEM.P256, hpke.KDF.HKDF_SHA256, hpke.AEAD.AES_128_GCM)
_ENC_LENGTH = 65
_JWE_ENCRYPTIONS = ["A128GCM", "A256GCM"]
MAX_TEXT = MAX_BYTES * 2  # base64url and JWE text around at most MAX_BYTES of CBOR


def _response_text(data: object) -> str:
    if not isinstance(data, dict) or set(data) != {"response"} or not isinstance(data["response"], str):
        raise PresentationRefused(Refusal.ENVELOPE_MALFORMED, 'expected {"response": "..."}')
    if len(data["response"]) > MAX_TEXT:
        raise PresentationRefused(Refusal.TOO_LARGE, "response text too long")
    return data["response"]


def annex_c_open(data: object, request: WalletRequest, transcript: list) -> bytes:
    """The DeviceResponse bytes inside ["dcapi", {"enc", "cipherText"}]."""
    try:
        raw = b64url_decode(_response_text(data))
    except ValueError:
        raise PresentationRefused(Refusal.ENVELOPE_MALFORMED, "response is not base64url") from None
    envelope = cbor_decode(raw, malformed=Refusal.ENVELOPE_MALFORMED)
    if not (
        isinstance(envelope, list)
        and len(envelope) == 2
        and envelope[0] == "dcapi"
        and isinstance(envelope[1], dict)
        and set(envelope[1]) == {"enc", "cipherText"}
    ):
        raise PresentationRefused(Refusal.ENVELOPE_MALFORMED, "not an Annex C dcapi response")
    enc, ciphertext = envelope[1]["enc"], envelope[1]["cipherText"]
    if not (isinstance(enc, bytes) and len(enc) == _ENC_LENGTH and isinstance(ciphertext, bytes)):
        raise PresentationRefused(Refusal.ENVELOPE_MALFORMED, "enc or cipherText malformed")
    try:
        return _SUITE.decrypt(enc + ciphertext, request.private_key, info=cbor2.dumps(transcript))
    except (InvalidTag, ValueError):
        raise PresentationRefused(Refusal.NOT_FOR_THIS_REQUEST, "does not decrypt under this request's key") from None


def openid4vp_open(data: object, request: WalletRequest) -> bytes:
    """The DeviceResponse bytes in the JWE's vp_token: exactly one presentation for one of our queries."""
    text = _response_text(data)
    try:
        header = json.loads(b64url_decode(text.split(".")[0]))
    except ValueError:
        header = None
    if text.count(".") != 4 or not isinstance(header, dict):
        raise PresentationRefused(Refusal.ENVELOPE_MALFORMED, "not a compact JWE")
    if header.get("alg") != "ECDH-ES" or header.get("enc") not in _JWE_ENCRYPTIONS or "epk" not in header:
        raise PresentationRefused(Refusal.ENVELOPE_MALFORMED, "JWE must be ECDH-ES with AES-GCM")
    key = ECKey.import_key(request.private_key)
    try:
        plaintext = jwe.decrypt_compact(text, key, algorithms=["ECDH-ES", *_JWE_ENCRYPTIONS]).plaintext
    except (JoseError, InvalidTag, ValueError):
        # The header was ours to check above; what fails now is the key agreement or the tag.
        raise PresentationRefused(Refusal.NOT_FOR_THIS_REQUEST, "does not decrypt under this request's key") from None
    try:
        payload = json.loads(plaintext)
        tokens = payload["vp_token"]
        ((query_id, presentations),) = tokens.items()
        if query_id not in {f"age{index}" for index in range(len(request.doc_types))}:
            raise KeyError(query_id)
        state = payload.get("state")
        (presentation,) = presentations
        presentation = b64url_decode(presentation)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise PresentationRefused(
            Refusal.ENVELOPE_MALFORMED, "vp_token must hold exactly one mdoc presentation"
        ) from None
    if request.state and state != request.state:  # direct_post.jwt: the wallet echoes the request's state
        raise PresentationRefused(Refusal.NOT_FOR_THIS_REQUEST, "state is not this request's")
    return presentation
