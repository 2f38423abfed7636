"""Small records sealed at rest: AES-GCM under a key derived from SECRET_KEY for one purpose, bound to an owner.

A sealed value is text, "sealed:v1:" + base64(nonce + ciphertext). A database dump or backup alone does not
open it, and a value copied to another row (another owner) does not open either. Used for the first
responses of idempotent requests (sessions_api.api.idempotency) and for what a session keeps of a passed
check until it ends (sessions_api.evidence).
"""

import base64
import hashlib
import hmac
import json
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings

PREFIX = "sealed:v1:"
_NONCE_BYTES = 12


class SealBroken(Exception):
    """The sealed value does not open: SECRET_KEY changed since, or it was sealed for another owner."""


def _key(purpose: bytes) -> bytes:
    return hmac.new(settings.SECRET_KEY.encode(), purpose, hashlib.sha256).digest()


def seal(value, *, purpose: bytes, bound_to: bytes) -> str:
    """`value` (anything json.dumps takes) as sealed text."""
    nonce = os.urandom(_NONCE_BYTES)
    sealed = AESGCM(_key(purpose)).encrypt(nonce, json.dumps(value).encode(), bound_to)
    return PREFIX + base64.b64encode(nonce + sealed).decode()


def is_sealed(text) -> bool:
    return isinstance(text, str) and text.startswith(PREFIX)


def unseal(text: str, *, purpose: bytes, bound_to: bytes):
    """The value `seal` was given; raises SealBroken when it cannot be opened with this purpose and owner."""
    raw = base64.b64decode(text.removeprefix(PREFIX))
    try:
        plain = AESGCM(_key(purpose)).decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], bound_to)
    except InvalidTag:
        raise SealBroken from None
    return json.loads(plain)
