"""Reads on tenants: API key lookup for authentication, and the secrets that sign a tenant's webhooks."""
import hmac

from django.utils import timezone

from .models import ApiKey, Tenant, WebhookSecretFields
from .services import API_KEY_PREFIX_LENGTH, api_key_hash

_NO_SUCH_KEY_HASH = "0" * 64  # what an unknown prefix is compared against: no SHA-256 hex digest is all zeros
_MODE_PREFIXES = {"av_live_": ApiKey.Mode.LIVE, "av_test_": ApiKey.Mode.TEST}


def api_key_resolve(raw_key: str) -> ApiKey | None:
    """The active key matching `raw_key`, or None. One indexed lookup, then a constant-time compare."""
    mode = _MODE_PREFIXES.get(raw_key[:8])
    if mode is None or len(raw_key) < 8 + API_KEY_PREFIX_LENGTH:
        return None
    prefix = raw_key[8 : 8 + API_KEY_PREFIX_LENGTH]
    api_key = ApiKey.objects.select_related("tenant").filter(prefix=prefix, mode=mode).first()
    # The same hash and compare whether the prefix exists or not, so the answer time does not tell
    # a guesser which prefixes are real.
    expected = api_key.key_hash if api_key is not None else _NO_SUCH_KEY_HASH
    if not hmac.compare_digest(expected, api_key_hash(raw_key)) or api_key is None:
        return None
    if api_key.revoked_at is not None:
        return None
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
