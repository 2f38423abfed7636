"""Reads on tenants: API key lookup for authentication (with its per-process cache), and webhook signing secrets."""

import hmac
import threading
import time
from dataclasses import dataclass

from django.utils import timezone

from .api_keys import api_key_hash, api_key_parse
from .models import ApiKey, PublishableKey, Tenant, WebhookSecretFields

_NO_SUCH_KEY_HASH = "0" * 64  # what an unknown prefix is compared against: no SHA-256 hex digest is all zeros


def api_key_resolve(raw_key: str, digest: str | None = None) -> ApiKey | None:
    """The active key matching `raw_key` (whose SHA-256 `digest` may be known), or None.

    One indexed lookup, then a constant-time compare.
    """
    parsed = api_key_parse(raw_key)
    if parsed is None:
        return None
    mode, prefix = parsed
    try:
        # get(), not first(): the prefix is unique, and first() would add an ORDER BY to a unique read.
        api_key = ApiKey.objects.select_related("tenant").get(prefix=prefix, mode=mode)
    except ApiKey.DoesNotExist:
        api_key = None
    # The same hash and compare whether the prefix exists or not, so the answer time does not tell
    # a guesser which prefixes are real.
    expected = api_key.key_hash if api_key is not None else _NO_SUCH_KEY_HASH
    if not hmac.compare_digest(expected, digest or api_key_hash(raw_key)) or api_key is None:
        return None
    if api_key.revoked_at is not None:
        return None
    return api_key


# The API key cache. Resolving a key with its tenant was a third of an API request's time, so each
# process keeps the keys it has seen for a short while. An entry is trusted only while it carries the
# current key generation, a value in Redis (tenants.api_keys.API_KEYS_GENERATION_KEY) that every
# change to a key or a tenant replaces (tenants.services.api_keys_changed) and that the rate limiter's
# single Redis round trip reads back on every request: a revocation or a disabled tenant takes effect
# on the next request in every worker. Without a generation (no Redis, or Redis unreachable) every
# request reads the database.
API_KEY_CACHE_SECONDS = 60  # bounds how long an entry lives if a generation change was ever missed
API_KEY_CACHE_MAX_ENTRIES = 10_000


@dataclass(frozen=True)
class ResolvedKey:
    """A key found for one request: from the cache with the generation it was confirmed at, or just read."""

    api_key: ApiKey
    raw_key: str
    from_cache: bool
    generation: str | None = None


@dataclass(frozen=True)
class _CacheEntry:
    api_key: ApiKey
    generation: str | None
    expires_at: float


class _ApiKeyCache:
    def __init__(self):
        self._lock = threading.Lock()
        self._entries: dict[str, _CacheEntry] = {}

    def get(self, digest: str) -> _CacheEntry | None:
        entry = self._entries.get(digest)
        if entry is not None and entry.expires_at < time.monotonic():
            return None
        return entry

    def put(self, digest: str, api_key: ApiKey, generation: str | None) -> None:
        with self._lock:
            if len(self._entries) >= API_KEY_CACHE_MAX_ENTRIES:
                self._entries.clear()
            self._entries[digest] = _CacheEntry(api_key, generation, time.monotonic() + API_KEY_CACHE_SECONDS)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_api_key_cache = _ApiKeyCache()


def api_key_resolve_cached(raw_key: str) -> ResolvedKey | None:
    """The key from this process's cache, not yet confirmed, or else from the database; None if unknown.

    Only a usable key (active, tenant enabled) is served from the cache; any refusal is decided on
    fresh data. The caller must pass the result through `api_key_confirm` before acting on it.
    """
    digest = api_key_hash(raw_key)
    entry = _api_key_cache.get(digest)
    if entry is not None and entry.api_key.tenant.enabled:
        return ResolvedKey(api_key=entry.api_key, raw_key=raw_key, from_cache=True, generation=entry.generation)
    api_key = api_key_resolve(raw_key, digest)
    if api_key is None:
        return None
    # Read before any generation was seen: kept without one, so the next use confirms it again.
    _api_key_cache.put(digest, api_key, None)
    return ResolvedKey(api_key=api_key, raw_key=raw_key, from_cache=False)


def api_key_confirm(resolved: ResolvedKey, generation: str | None) -> ApiKey | None:
    """The key as of `generation` (read from Redis before this call), or None if no longer valid.

    A key read from the database during this request stands as read; it is confirmed into the cache by
    a later request, which knows a generation read before its own database read.
    """
    if not resolved.from_cache or (generation is not None and resolved.generation == generation):
        return resolved.api_key
    if generation is None:
        _api_key_cache.clear()  # nothing can be confirmed: read the database until Redis is back
        return api_key_resolve(resolved.raw_key)
    api_key = api_key_resolve(resolved.raw_key)
    if api_key is not None:
        _api_key_cache.put(api_key_hash(resolved.raw_key), api_key, generation)
    return api_key


def webhook_signing_secrets(tenant: Tenant, mode: str = ApiKey.Mode.LIVE) -> list[str]:
    """The secrets that sign `mode`'s events now: the current one, plus the previous one during a rotation's overlap.

    Live and test events never share a secret: a sandbox approval must not verify as a live one.
    """
    fields = WebhookSecretFields.of(mode)
    current, previous = getattr(tenant, fields.current), getattr(tenant, fields.previous)
    expires = getattr(tenant, fields.previous_expires_at)
    secrets = [current] if current else []
    if previous and expires and expires > timezone.now():
        secrets.append(previous)
    return secrets


def publishable_key_resolve(raw_key: str) -> PublishableKey | None:
    """The active publishable key `raw_key`, or None (unknown, revoked, or its tenant disabled)."""
    if not raw_key.startswith(("av_pk_live_", "av_pk_test_")) or len(raw_key) > 64:
        return None
    try:
        key = PublishableKey.objects.select_related("tenant").get(key=raw_key)
    except PublishableKey.DoesNotExist:
        return None
    if key.revoked_at is not None or not key.tenant.enabled:
        return None
    return key
