"""Reads on tenants: API key lookup for authentication, and the secrets that sign a tenant's webhooks."""
import hmac

from django.utils import timezone

from .models import ApiKey, Tenant
from .services import API_KEY_PREFIX_LENGTH, api_key_hash

_MODE_PREFIXES = {"av_live_": ApiKey.Mode.LIVE, "av_test_": ApiKey.Mode.TEST}


def api_key_resolve(raw_key: str) -> ApiKey | None:
    """The active key matching `raw_key`, or None. One indexed lookup, then a constant-time compare."""
    mode = _MODE_PREFIXES.get(raw_key[:8])
    if mode is None or len(raw_key) < 8 + API_KEY_PREFIX_LENGTH:
        return None
    prefix = raw_key[8 : 8 + API_KEY_PREFIX_LENGTH]
    api_key = ApiKey.objects.select_related("tenant").filter(prefix=prefix, mode=mode).first()
    if api_key is None or not hmac.compare_digest(api_key.key_hash, api_key_hash(raw_key)):
        return None
    if api_key.revoked_at is not None:
        return None
    return api_key


def webhook_signing_secrets(tenant: Tenant) -> list[str]:
    """The secrets that sign now: the current one, plus the previous one during a rotation's overlap."""
    secrets = [tenant.webhook_secret] if tenant.webhook_secret else []
    expires = tenant.webhook_secret_previous_expires_at
    if tenant.webhook_secret_previous and expires and expires > timezone.now():
        secrets.append(tenant.webhook_secret_previous)
    return secrets
