"""The secret API key's format and hash: `av_live_` or `av_test_`, then 40 URL-safe characters of which
the first 12 are the public, indexed prefix; only the key's SHA-256 is stored.

Also the name of the Redis value that every change to a key or a tenant replaces (the API key cache's
generation): written by tenants.services, read back by the cache (tenants.selectors) and by the rate
limiter's single Redis round trip on every request (core.rate_limit, asked by sessions_api.api.throttle).
"""

import hashlib
import secrets

from .models import ApiKey

API_KEY_RANDOM_LENGTH = 40
API_KEY_PREFIX_LENGTH = 12
MODE_PREFIXES = {"av_live_": ApiKey.Mode.LIVE, "av_test_": ApiKey.Mode.TEST}
SECRET_KEY_PREFIXES = tuple(MODE_PREFIXES)
API_KEYS_GENERATION_KEY = "apikeys:generation"
_URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def api_key_hash(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_new(mode: str) -> tuple[str, str]:
    """A new key for `mode` and its prefix: (raw key, prefix)."""
    random_part = "".join(secrets.choice(_URLSAFE) for _ in range(API_KEY_RANDOM_LENGTH))
    return f"av_{mode}_{random_part}", random_part[:API_KEY_PREFIX_LENGTH]


def api_key_parse(raw_key: str) -> tuple[str, str] | None:
    """(mode, prefix) of something shaped like a secret key, or None."""
    mode = MODE_PREFIXES.get(raw_key[:8])
    if mode is None or len(raw_key) < 8 + API_KEY_PREFIX_LENGTH:
        return None
    return mode, raw_key[8 : 8 + API_KEY_PREFIX_LENGTH]
