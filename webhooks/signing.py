"""Standard Webhooks signatures: `v1,<base64 HMAC-SHA256>` over "{id}.{timestamp}.{body}", one per live secret."""

import base64
import hashlib
import hmac
from collections.abc import Mapping, Sequence

SECRET_PREFIX = "whsec_"


def secret_key_bytes(secret: str) -> bytes:
    """The HMAC key of a `whsec_<base64>` secret: the decoded bytes, as Standard Webhooks defines it."""
    encoded = secret[len(SECRET_PREFIX) :] if secret.startswith(SECRET_PREFIX) else secret
    key = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True)
    if not key:
        raise ValueError("a webhook secret may not be empty")
    return key


def signature(*, secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    signed = b"%s.%d.%s" % (msg_id.encode(), timestamp, body)
    digest = hmac.new(secret_key_bytes(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_header(*, secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` value; space-separated, so either secret verifies during a rotation."""
    if not secrets:
        raise ValueError("no webhook secret to sign with")
    return " ".join(signature(secret=s, msg_id=msg_id, timestamp=timestamp, body=body) for s in secrets)


class SignatureInvalid(Exception):
    """The request is not a webhook signed by one of the given secrets, or it is too old (or too new)."""


def signature_verify(
    *, secrets: Sequence[str], headers: Mapping[str, str], body: bytes, now: float, tolerance_seconds: int = 300
) -> str:
    """The secret that signed this request (headers by lower-case name), or SignatureInvalid.

    As a Standard Webhooks receiver checks: the timestamp within `tolerance_seconds` of `now`, then
    any `v1,` signature of the header equal (in constant time) to the one this secret makes.
    """
    msg_id, timestamp, signatures = (
        headers.get(name, "") for name in ("webhook-id", "webhook-timestamp", "webhook-signature")
    )
    if not (msg_id and timestamp.isdigit() and signatures):
        raise SignatureInvalid("missing webhook-id, webhook-timestamp or webhook-signature")
    if abs(now - int(timestamp)) > tolerance_seconds:
        raise SignatureInvalid(f"webhook-timestamp is {int(now) - int(timestamp)} s away from now")
    offered = signatures.split()
    for secret in secrets:
        expected = signature(secret=secret, msg_id=msg_id, timestamp=int(timestamp), body=body)
        if any(hmac.compare_digest(expected, candidate) for candidate in offered):
            return secret
    raise SignatureInvalid("no signature matches")
