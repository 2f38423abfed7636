"""Standard Webhooks signatures: `v1,<base64 HMAC-SHA256>` over "{id}.{timestamp}.{body}", one per live secret."""
import base64
import hashlib
import hmac
from collections.abc import Sequence

SECRET_PREFIX = "whsec_"


def secret_key_bytes(secret: str) -> bytes:
    """The HMAC key of a `whsec_<base64>` secret: the decoded bytes, as Standard Webhooks defines it."""
    encoded = secret[len(SECRET_PREFIX):] if secret.startswith(SECRET_PREFIX) else secret
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
