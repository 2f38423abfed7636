"""COSE (RFC 9052) as ISO 18013-5 uses it: COSE_Sign1 with ECDSA, COSE_Key EC2, the x5chain header."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import cbor2
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from .cbor import cbor_decode
from .refusals import PresentationRefused

HEADER_ALG = 1
HEADER_X5CHAIN = 33
# The pinned signature algorithms: COSE ES256, ES384, ES512, each only with its own curve.
ALGORITHMS = {
    -7: (ec.SECP256R1, hashes.SHA256),
    -35: (ec.SECP384R1, hashes.SHA384),
    -36: (ec.SECP521R1, hashes.SHA512),
}
_CURVES = {1: ec.SECP256R1, 2: ec.SECP384R1, 3: ec.SECP521R1}
MAX_CHAIN = 4


@dataclass(frozen=True)
class Sign1:
    protected_bytes: bytes
    protected: dict
    unprotected: dict
    payload: bytes | None
    signature: bytes

    @property
    def algorithm(self) -> object:
        # Only the protected header may name the algorithm: an unprotected one could be swapped.
        return self.protected.get(HEADER_ALG)


def sign1_parse(value: object, *, malformed: str) -> Sign1:
    if isinstance(value, cbor2.CBORTag) and value.tag == 18:
        value = value.value  # cbor2 hands a tag's content over frozen: a tuple, frozendicts
    if not (isinstance(value, (list, tuple)) and len(value) == 4):
        raise PresentationRefused(malformed, "COSE_Sign1 is not a 4-element array")
    protected_bytes, unprotected, payload, signature = value
    if not isinstance(protected_bytes, bytes) or not isinstance(unprotected, Mapping):
        raise PresentationRefused(malformed, "COSE_Sign1 headers malformed")
    protected = cbor_decode(protected_bytes, malformed=malformed) if protected_bytes else {}
    if not isinstance(protected, dict):
        raise PresentationRefused(malformed, "COSE protected header is not a map")
    if not (payload is None or isinstance(payload, bytes)) or not isinstance(signature, bytes):
        raise PresentationRefused(malformed, "COSE_Sign1 payload or signature malformed")
    return Sign1(protected_bytes, protected, dict(unprotected), payload, signature)


def sign1_verify(sign1: Sign1, public_key: ec.EllipticCurvePublicKey, *, payload: bytes) -> bool:
    """Check the signature over `payload` (the attached one, or the detached one rebuilt by the caller)."""
    if sign1.algorithm not in ALGORITHMS:
        return False
    curve, digest = ALGORITHMS[sign1.algorithm]
    if not isinstance(public_key, ec.EllipticCurvePublicKey) or not isinstance(public_key.curve, curve):
        return False
    size = (public_key.curve.key_size + 7) // 8
    if len(sign1.signature) != 2 * size:
        return False
    r = int.from_bytes(sign1.signature[:size], "big")
    s = int.from_bytes(sign1.signature[size:], "big")
    to_be_signed = cbor2.dumps(["Signature1", sign1.protected_bytes, b"", payload])
    try:
        public_key.verify(encode_dss_signature(r, s), to_be_signed, ec.ECDSA(digest()))
    except InvalidSignature:
        return False
    return True


def x5chain(sign1: Sign1, *, malformed: str) -> list[x509.Certificate]:
    """The certificates of the x5chain header, leaf first (unprotected, as ISO 18013-5 places it)."""
    raw = sign1.unprotected.get(HEADER_X5CHAIN, sign1.protected.get(HEADER_X5CHAIN))
    if isinstance(raw, bytes):
        raw = [raw]
    if not (isinstance(raw, (list, tuple)) and 0 < len(raw) <= MAX_CHAIN and all(isinstance(c, bytes) for c in raw)):
        raise PresentationRefused(malformed, "x5chain missing or malformed")
    try:
        return [x509.load_der_x509_certificate(der) for der in raw]
    except ValueError:
        raise PresentationRefused(malformed, "x5chain holds a certificate that does not parse") from None


def cose_key_public(value: object, *, malformed: str) -> ec.EllipticCurvePublicKey:
    """An EC2 COSE_Key (kty 2) on P-256/384/521 as a public key; anything else is refused."""
    if not isinstance(value, dict) or value.get(1) != 2 or value.get(-1) not in _CURVES:
        raise PresentationRefused(malformed, "device key is not an EC2 COSE_Key on a NIST curve")
    curve = _CURVES[value[-1]]()
    size = (curve.key_size + 7) // 8
    x, y = value.get(-2), value.get(-3)
    if not (isinstance(x, bytes) and isinstance(y, bytes) and len(x) == size and len(y) == size):
        raise PresentationRefused(malformed, "device key coordinates malformed")
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(curve, b"\x04" + x + y)
    except ValueError:
        raise PresentationRefused(malformed, "device key is not on its curve") from None


def cose_key_from_public(public_key: ec.EllipticCurvePublicKey) -> dict:
    """The EC2 COSE_Key of a public key (kty 2, crv, x, y)."""
    curve_id = {cls: ident for ident, cls in _CURVES.items()}[type(public_key.curve)]
    size = (public_key.curve.key_size + 7) // 8
    numbers = public_key.public_numbers()
    return {1: 2, -1: curve_id, -2: numbers.x.to_bytes(size, "big"), -3: numbers.y.to_bytes(size, "big")}
