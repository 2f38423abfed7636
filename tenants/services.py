"""Writes on tenants: onboarding, API key generation and revocation, webhook secret rotation."""

import base64
import logging
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

import redis
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.redis_client import redis_request_client as _redis_client

from .api_keys import API_KEYS_GENERATION_KEY, api_key_hash, api_key_new
from .client_settings import entries_clean, origin_normalize, return_url_validate
from .models import ApiKey, Membership, PublishableKey, Tenant, WebhookSecretFields

logger = logging.getLogger(__name__)

WEBHOOK_SECRET_OVERLAP = timedelta(hours=24)
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class GeneratedKey:
    api_key: ApiKey
    raw_key: str  # shown to the caller exactly once


def webhook_secret_new() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def api_key_generate(*, tenant: Tenant, mode: str, label: str = "", created_by=None) -> GeneratedKey:
    if mode not in ApiKey.Mode.values:
        raise ValueError(f"unknown key mode {mode!r}")
    while True:
        raw_key, prefix = api_key_new(mode)
        if not ApiKey.objects.filter(prefix=prefix).exists():
            break
    api_key = ApiKey.objects.create(
        tenant=tenant, mode=mode, prefix=prefix, key_hash=api_key_hash(raw_key), label=label, created_by=created_by
    )
    return GeneratedKey(api_key=api_key, raw_key=raw_key)


def api_key_touch(api_key: ApiKey) -> None:
    """Record use at most once a minute, so authentication does not write on every request."""
    now = timezone.now()
    if api_key.last_used_at and now - api_key.last_used_at < LAST_USED_RESOLUTION:
        return
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    api_key.last_used_at = now


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    # Conditional so a double click or two staff members revoking at once keep the first time.
    ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    api_keys_changed()
    api_key.refresh_from_db()
    return api_key


def _api_keys_generation_replace() -> None:
    try:
        _redis_client().set(API_KEYS_GENERATION_KEY, uuid.uuid4().hex)
    except redis.RedisError as error:
        # Workers that cannot read the generation read the database instead; entries expire anyway.
        logger.warning("could not publish an API key change: %s", error)


def api_keys_changed() -> None:
    """Every process's API key cache must re-read its keys (a key or a tenant changed).

    Now, so that the change is seen at once, and again after the commit, so that an entry re-read
    from the database before the commit (the old values) is not trusted either.
    """
    if not settings.REDIS_URL:
        return  # no cache to invalidate: without Redis every request reads its key from the database
    _api_keys_generation_replace()
    transaction.on_commit(_api_keys_generation_replace)


@dataclass(frozen=True)
class OnboardedTenant:
    tenant: Tenant
    live_key: str
    test_key: str


@transaction.atomic
def tenant_create(*, name: str, contact_email: str = "", webhooks_enabled: bool = False) -> OnboardedTenant:
    tenant = Tenant.objects.create(
        name=name,
        contact_email=contact_email,
        webhooks_enabled=webhooks_enabled,
        webhook_secret=webhook_secret_new(),
        test_webhook_secret=webhook_secret_new(),
    )
    live = api_key_generate(tenant=tenant, mode=ApiKey.Mode.LIVE, label="default")
    test = api_key_generate(tenant=tenant, mode=ApiKey.Mode.TEST, label="default")
    return OnboardedTenant(tenant=tenant, live_key=live.raw_key, test_key=test.raw_key)


@transaction.atomic
def tenant_webhook_secret_rotate(
    *, tenant: Tenant, mode: str = ApiKey.Mode.LIVE, overlap: timedelta = WEBHOOK_SECRET_OVERLAP
) -> Tenant:
    """A new secret for `mode`'s events; the previous one keeps signing beside it for `overlap`."""
    fields = WebhookSecretFields.of(mode)
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    current = getattr(tenant, fields.current)
    setattr(tenant, fields.previous, current)
    setattr(tenant, fields.previous_expires_at, timezone.now() + overlap if current else None)
    setattr(tenant, fields.current, webhook_secret_new())
    tenant.save(update_fields=fields.names)
    return tenant


def membership_add(*, tenant: Tenant, user) -> Membership:
    membership, _ = Membership.objects.get_or_create(tenant=tenant, user=user)
    return membership


def publishable_key_generate(
    *,
    tenant: Tenant,
    mode: str,
    label: str = "",
    allowed_origins=(),
    return_urls=(),
    created_by=None,
    client_sessions_enabled: bool = False,
    client_age_limit: int | None = None,
    client_notification_url: str = "",
) -> PublishableKey:
    if mode not in ApiKey.Mode.values:
        raise ValueError(f"unknown key mode {mode!r}")
    key = PublishableKey(
        tenant=tenant,
        mode=mode,
        key=PublishableKey.new_key(mode),
        label=label,
        created_by=created_by,
        allowed_origins=entries_clean(allowed_origins, origin_normalize),
        return_urls=entries_clean(return_urls, return_url_validate),
        client_sessions_enabled=client_sessions_enabled,
        client_age_limit=client_age_limit,
        client_notification_url=client_notification_url,
    )
    key.full_clean()
    key.save()
    return key


def publishable_key_update(*, key: PublishableKey, **fields) -> PublishableKey:
    if "allowed_origins" in fields:
        fields["allowed_origins"] = entries_clean(fields["allowed_origins"], origin_normalize)
    if "return_urls" in fields:
        fields["return_urls"] = entries_clean(fields["return_urls"], return_url_validate)
    for name, value in fields.items():
        setattr(key, name, value)
    key.full_clean()
    key.save(update_fields=list(fields))
    return key


def publishable_key_revoke(*, key: PublishableKey) -> PublishableKey:
    PublishableKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db()
    return key


def publishable_key_touch(key: PublishableKey) -> None:
    now = timezone.now()
    if key.last_used_at and now - key.last_used_at < LAST_USED_RESOLUTION:
        return
    PublishableKey.objects.filter(pk=key.pk).update(last_used_at=now)
    key.last_used_at = now


def api_key_flag_exposed(api_key: ApiKey) -> None:
    """A secret key reached a client endpoint: it is public now; the dashboard asks for a rotation."""
    ApiKey.objects.filter(pk=api_key.pk, exposed_at__isnull=True).update(exposed_at=timezone.now())
    logger.warning(
        "secret API key %s of tenant %s was sent to a client endpoint", api_key.display_prefix, api_key.tenant_id
    )
