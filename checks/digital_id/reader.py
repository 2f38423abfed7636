"""The operator's reader certificate: its key and chain, and the signatures wallets ask of a verifier.

OpenID4VP 1.0 signed request objects (JAR, RFC 9101: `typ` `oauth-authz-req+jwt`, the chain in `x5c`,
client identifier `x509_san_dns:<SAN DNS name>` or `x509_hash:<base64url SHA-256 of the leaf's DER>`),
and ISO 18013-5 `readerAuth` (COSE_Sign1 over ReaderAuthentication, the chain in `x5chain`) for
ISO 18013-7 Annex C. Nothing is signed with a chain that does not hold: the key must be the leaf's,
each certificate must be issued by the next, and every one must be within its validity at signing time.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import cbor2
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID
from joserfc import jws
from joserfc.jwk import ECKey

CLIENT_ID_SAN_DNS = "x509_san_dns"
CLIENT_ID_HASH = "x509_hash"
CLIENT_ID_SCHEMES = (CLIENT_ID_SAN_DNS, CLIENT_ID_HASH)
REQUEST_OBJECT_TYPE = "oauth-authz-req+jwt"
MAX_CHAIN = 4
# ISO 18013-5 Annex B: the extended key usage of a reader authentication certificate.
MDL_READER_AUTH_EKU = x509.ObjectIdentifier("1.0.18013.5.1.6")
# JOSE and COSE names of the signature algorithm each curve is used with (one per curve, never mixed).
_ALGORITHMS = {
    "secp256r1": ("ES256", -7, hashes.SHA256),
    "secp384r1": ("ES384", -35, hashes.SHA384),
    "secp521r1": ("ES512", -36, hashes.SHA512),
}
_COSE_HEADER_ALG = 1
_COSE_HEADER_X5CHAIN = 33


class ReaderCertificateRefused(Exception):
    """The key and chain cannot sign (now); `code` says why, `detail` says it for the operator."""

    UNREADABLE = "reader_certificate_unreadable"
    KEY_MISMATCH = "reader_key_mismatch"  # the key is not the leaf certificate's
    CHAIN_BROKEN = "reader_chain_broken"  # a certificate not issued by the next one
    NOT_YET_VALID = "reader_certificate_not_yet_valid"
    EXPIRED = "reader_certificate_expired"
    CLIENT_ID_MISMATCH = "reader_client_id_mismatch"  # the client identifier is not this leaf's

    def __init__(self, code: str, detail: str = ""):
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class ReaderIdentity:
    key: ec.EllipticCurvePrivateKey
    chain: tuple[x509.Certificate, ...]  # leaf first, as sent in `x5c` and `x5chain`

    @property
    def leaf(self) -> x509.Certificate:
        return self.chain[0]

    @property
    def dns_names(self) -> list[str]:
        try:
            san = self.leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return []
        return san.get_values_for_type(x509.DNSName)

    @property
    def expires_at(self) -> datetime.datetime:
        """When the first certificate of the chain runs out (the chain signs nothing after)."""
        return min(certificate.not_valid_after_utc for certificate in self.chain)

    def chain_der(self) -> list[bytes]:
        """The chain as sent in `x5c` and `x5chain`: leaf first, without a self-signed root at its end
        (HAIP and ISO 18013-5 leave the trust anchor out: the wallet has its own copy)."""
        chain = list(self.chain)
        if len(chain) > 1 and chain[-1].subject == chain[-1].issuer:
            chain.pop()
        return [certificate.public_bytes(serialization.Encoding.DER) for certificate in chain]

    def client_id(self, scheme: str = CLIENT_ID_SAN_DNS, *, dns_name: str | None = None) -> str:
        """The OpenID4VP client identifier this leaf stands for: `x509_san_dns:<name>` or `x509_hash:<hash>`."""
        if scheme == CLIENT_ID_HASH:
            return f"{CLIENT_ID_HASH}:{_b64url(hashlib.sha256(self.chain_der()[0]).digest())}"
        if scheme != CLIENT_ID_SAN_DNS:
            raise ValueError(f"client identifier scheme must be one of {CLIENT_ID_SCHEMES}")
        names = self.dns_names
        if dns_name is None and names:
            dns_name = names[0]
        if dns_name is None or dns_name not in names:
            raise ReaderCertificateRefused(
                ReaderCertificateRefused.CLIENT_ID_MISMATCH,
                f"{dns_name or 'no DNS name'} is not among the leaf's SAN DNS names {names}",
            )
        return f"{CLIENT_ID_SAN_DNS}:{dns_name}"


def reader_identity_load(*, key_pem: bytes, chain_pem: bytes) -> ReaderIdentity:
    """The key (PEM, unencrypted) and its chain (PEM bundle, leaf first), parsed but not yet checked."""
    try:
        key = serialization.load_pem_private_key(key_pem, password=None)
    except (ValueError, TypeError) as error:
        raise ReaderCertificateRefused(ReaderCertificateRefused.UNREADABLE, f"key: {error}") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name not in _ALGORITHMS:
        raise ReaderCertificateRefused(ReaderCertificateRefused.UNREADABLE, "key is not EC on P-256, P-384 or P-521")
    try:
        chain = tuple(x509.load_pem_x509_certificates(chain_pem))
    except ValueError as error:
        raise ReaderCertificateRefused(ReaderCertificateRefused.UNREADABLE, f"chain: {error}") from None
    if not 0 < len(chain) <= MAX_CHAIN:
        raise ReaderCertificateRefused(
            ReaderCertificateRefused.UNREADABLE, f"chain holds 1 to {MAX_CHAIN} certificates"
        )
    return ReaderIdentity(key, chain)


def _public_der(key) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _is_ca(certificate: x509.Certificate) -> bool:
    try:
        return certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        return False


def reader_identity_check(identity: ReaderIdentity, *, now: datetime.datetime) -> None:
    """Refuse a key that is not the leaf's, a chain whose links do not verify, or a certificate out of date."""
    if _public_der(identity.key.public_key()) != _public_der(identity.leaf.public_key()):
        raise ReaderCertificateRefused(ReaderCertificateRefused.KEY_MISMATCH, "the key is not the leaf certificate's")
    for certificate, issuer in zip(identity.chain, identity.chain[1:], strict=False):
        try:
            certificate.verify_directly_issued_by(issuer)
        except (ValueError, TypeError, InvalidSignature):
            raise ReaderCertificateRefused(
                ReaderCertificateRefused.CHAIN_BROKEN,
                f"{certificate.subject.rfc4514_string()} is not issued by {issuer.subject.rfc4514_string()}",
            ) from None
        if not _is_ca(issuer):  # a wallet's path validation would refuse it: say so before signing
            raise ReaderCertificateRefused(
                ReaderCertificateRefused.CHAIN_BROKEN, f"{issuer.subject.rfc4514_string()} is not a CA certificate"
            )
    for certificate in identity.chain:
        if now < certificate.not_valid_before_utc:
            raise ReaderCertificateRefused(
                ReaderCertificateRefused.NOT_YET_VALID,
                f"{certificate.subject.rfc4514_string()} is valid from {certificate.not_valid_before_utc:%Y-%m-%d}",
            )
        if now > certificate.not_valid_after_utc:
            raise ReaderCertificateRefused(
                ReaderCertificateRefused.EXPIRED,
                f"{certificate.subject.rfc4514_string()} expired on {certificate.not_valid_after_utc:%Y-%m-%d}",
            )


def _client_id_check(identity: ReaderIdentity, client_id: str) -> None:
    scheme, _, value = client_id.partition(":")
    if scheme not in CLIENT_ID_SCHEMES or identity.client_id(scheme, dns_name=value or None) != client_id:
        raise ReaderCertificateRefused(
            ReaderCertificateRefused.CLIENT_ID_MISMATCH, f"{client_id} does not name this reader certificate"
        )


def _signature(identity: ReaderIdentity, message: bytes) -> bytes:
    """ECDSA over `message` as COSE carries it: r and s, fixed-size, concatenated."""
    _, _, digest = _algorithm(identity)
    r, s = decode_dss_signature(identity.key.sign(message, ec.ECDSA(digest())))
    size = (identity.key.curve.key_size + 7) // 8
    return r.to_bytes(size, "big") + s.to_bytes(size, "big")


def _algorithm(identity: ReaderIdentity):
    return _ALGORITHMS[identity.key.curve.name]


def request_object_sign(claims: dict, *, identity: ReaderIdentity, client_id: str, now: datetime.datetime) -> str:
    """A signed OpenID4VP request object (compact JWS) carrying `claims`, `client_id` and `iat`.

    The caller puts the request's own parameters in `claims` (response_type, response_mode, nonce,
    dcql_query, client_metadata, expected_origins or response_uri...); `client_id` must name this
    leaf (`ReaderIdentity.client_id`). Refused, with nothing signed, when the chain does not hold now.
    """
    reader_identity_check(identity, now=now)
    _client_id_check(identity, client_id)
    jose_alg, _, _ = _algorithm(identity)
    header = {
        "alg": jose_alg,
        "typ": REQUEST_OBJECT_TYPE,
        "x5c": [base64.b64encode(d).decode() for d in identity.chain_der()],
    }
    payload = json.dumps({**claims, "client_id": client_id, "iat": int(now.timestamp())}, separators=(",", ":"))
    return jws.serialize_compact(header, payload.encode(), ECKey.import_key(identity.key), algorithms=[jose_alg])


def reader_auth_sign(
    *, identity: ReaderIdentity, session_transcript: list, items_request_bytes: bytes, now: datetime.datetime
) -> list:
    """ISO 18013-5 9.1.4 `readerAuth`: a COSE_Sign1 with a detached payload, ReaderAuthenticationBytes =
    #6.24(bstr .cbor ["ReaderAuthentication", SessionTranscript, ItemsRequestBytes]); the algorithm
    protected, the chain unprotected in `x5chain` (a bstr for one certificate, an array for more)."""
    reader_identity_check(identity, now=now)
    _, cose_alg, _ = _algorithm(identity)
    protected = cbor2.dumps({_COSE_HEADER_ALG: cose_alg})
    authentication = ["ReaderAuthentication", session_transcript, cbor2.CBORTag(24, items_request_bytes)]
    payload = cbor2.dumps(cbor2.CBORTag(24, cbor2.dumps(authentication)))
    signature = _signature(identity, cbor2.dumps(["Signature1", protected, b"", payload]))
    chain = identity.chain_der()
    return [protected, {_COSE_HEADER_X5CHAIN: chain[0] if len(chain) == 1 else chain}, None, signature]


def reader_key_create() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def reader_csr_create(
    key: ec.EllipticCurvePrivateKey, *, dns_name: str, organization: str, country: str
) -> x509.CertificateSigningRequest:
    """A CSR for the reader certificate: the service's host as CN and SAN DNS name (x509_san_dns needs it)."""
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COUNTRY_NAME, country),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
            x509.NameAttribute(NameOID.COMMON_NAME, dns_name),
        ]
    )
    return (
        x509.CertificateSigningRequestBuilder()
        .subject_name(name)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name)]), critical=False)
        .add_extension(x509.ExtendedKeyUsage([MDL_READER_AUTH_EKU]), critical=False)
        .sign(key, hashes.SHA256())
    )


def chain_order(certificates: Sequence[x509.Certificate], key: ec.EllipticCurvePrivateKey) -> list[x509.Certificate]:
    """An issued bundle put leaf first: the key's certificate, then each one's issuer as far as the bundle goes."""
    remaining = list(certificates)
    leaf = next((c for c in remaining if _public_der(c.public_key()) == _public_der(key.public_key())), None)
    if leaf is None:
        raise ReaderCertificateRefused(
            ReaderCertificateRefused.KEY_MISMATCH, "no certificate of the bundle is the key's"
        )
    ordered = [leaf]
    remaining.remove(leaf)
    while remaining:
        issuer = next((c for c in remaining if c.subject == ordered[-1].issuer), None)
        if issuer is None or ordered[-1].issuer == ordered[-1].subject:
            break
        ordered.append(issuer)
        remaining.remove(issuer)
    return ordered
