"""Session transcripts, rebuilt from the server's own request state only (never from the response).

ISO 18013-7 Annex C:  [null, null, ["dcapi", SHA-256(CBOR([EncryptionInfo base64url, origin]))]]
OpenID4VP 1.0 (B.2.6.2): [null, null, ["OpenID4VPDCAPIHandover",
                                      SHA-256(CBOR([origin, nonce, JWK thumbprint of the response key]))]]
OpenID4VP 1.0 cross-device (B.2.6.1): [null, null, ["OpenID4VPHandover",
                                      SHA-256(CBOR([client_id, nonce, JWK thumbprint, response_uri]))]]
"""

from __future__ import annotations

import hashlib

import cbor2

from .request import PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP, PROTOCOL_OPENID4VP_CROSS_DEVICE, WalletRequest


def session_transcript(request: WalletRequest, protocol: str) -> list:
    if protocol == PROTOCOL_ANNEX_C:
        info = cbor2.dumps([request.encryption_info(), request.origin])
        return [None, None, ["dcapi", hashlib.sha256(info).digest()]]
    if protocol == PROTOCOL_OPENID4VP:
        info = cbor2.dumps([request.origin, request.nonce_text, request.jwk_thumbprint()])
        return [None, None, ["OpenID4VPDCAPIHandover", hashlib.sha256(info).digest()]]
    if protocol == PROTOCOL_OPENID4VP_CROSS_DEVICE:
        info = cbor2.dumps([request.client_id, request.nonce_text, request.jwk_thumbprint(), request.response_uri])
        return [None, None, ["OpenID4VPHandover", hashlib.sha256(info).digest()]]
    raise ValueError(protocol)
