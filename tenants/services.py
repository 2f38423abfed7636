"""Writes on tenants: onboarding, settings, API and publishable keys, webhook secrets; each audited with its actor."""

import base64
import logging
import secrets
import uuid
from dataclasses import dataclass
from datetime import timedelta

import redis
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core.redis_client import redis_request_client as _redis_client

from .api_keys import API_KEYS_GENERATION_KEY, api_key_hash, api_key_new
from .audit import Actor, audit_record, changes_record, secret_hint
from .client_settings import entries_clean, origin_normalize, return_url_validate
from .models import ApiKey, AuditLogEntry, Membership, PublishableKey, Role, Tenant, WebhookSecretFields

logger = logging.getLogger(__name__)

WEBHOOK_SECRET_OVERLAP = timedelta(hours=24)
LAST_USED_RESOLUTION = timedelta(minutes=1)
# More live keys than this is a sign of keys being made instead of rotated (every door: the service counts).
MAX_ACTIVE_KEYS_PER_MODE = 10


@dataclass(frozen=True)
class GeneratedKey:
    api_key: ApiKey
    raw_key: str  # shown to the caller exactly once


def webhook_secret_new() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def _lock(tenant: Tenant) -> None:
    # Serializes the tenant's key changes, so two generations cannot both pass the count below.
    Tenant.objects.select_for_update().filter(pk=tenant.pk).first()


def _api_key_create(*, tenant: Tenant, mode: str, label: str, created_by) -> GeneratedKey:
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


@transaction.atomic
def api_key_generate(*, tenant: Tenant, mode: str, label: str = "", actor: Actor) -> GeneratedKey:
    """A new secret key (shown once), refused past MAX_ACTIVE_KEYS_PER_MODE active keys of `mode`."""
    _lock(tenant)
    active = ApiKey.objects.filter(tenant=tenant, mode=mode, revoked_at__isnull=True).count()
    if active >= MAX_ACTIVE_KEYS_PER_MODE:
        raise ValidationError(
            f"This tenant already has {active} active {mode} keys. Revoke one you no longer use first."
        )
    generated = _api_key_create(tenant=tenant, mode=mode, label=label, created_by=actor.user)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.API_KEY_GENERATED,
        target_type="api_key",
        target_id=str(generated.api_key.pk),
        target_label=generated.api_key.display_prefix,
        extra={"mode": mode, "label": label},
    )
    return generated


def api_key_touch(api_key: ApiKey) -> None:
    """Record use at most once a minute, so authentication does not write on every request."""
    now = timezone.now()
    if api_key.last_used_at and now - api_key.last_used_at < LAST_USED_RESOLUTION:
        return
    ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
    api_key.last_used_at = now


@transaction.atomic
def api_key_revoke(*, api_key: ApiKey, actor: Actor) -> ApiKey:
    """Revoke the key (it fails at once). Revoking a key that is already revoked changes and records nothing."""
    # Conditional so a double click or two staff members revoking at once keep the first time (and one row).
    revoked = ApiKey.objects.filter(pk=api_key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    api_keys_changed()
    api_key.refresh_from_db()
    if revoked:
        audit_record(
            tenant=api_key.tenant,
            actor=actor,
            action=AuditLogEntry.Action.API_KEY_REVOKED,
            target_type="api_key",
            target_id=str(api_key.pk),
            target_label=api_key.display_prefix,
            extra={"mode": api_key.mode, "label": api_key.label},
        )
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
def tenant_create(
    *,
    name: str,
    actor: Actor,
    contact_email: str = "",
    webhooks_enabled: bool = False,
    with_keys: bool = True,
    **fields,
) -> OnboardedTenant:
    """A tenant with both webhook secrets and (unless `with_keys` is off) one default key per mode.

    One audit row says who onboarded it; the keys made here are in it, not rows of their own.
    """
    tenant = Tenant(
        name=name,
        contact_email=contact_email,
        webhooks_enabled=webhooks_enabled,
        webhook_secret=webhook_secret_new(),
        test_webhook_secret=webhook_secret_new(),
        **fields,
    )
    tenant.save()
    keys = {}
    if with_keys:
        for mode in (ApiKey.Mode.LIVE, ApiKey.Mode.TEST):
            keys[mode] = _api_key_create(tenant=tenant, mode=mode, label="default", created_by=actor.user)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.TENANT_CREATED,
        target_type="tenant",
        target_id=tenant.pk,
        target_label=tenant.name,
        extra={f"{mode} key": generated.api_key.display_prefix for mode, generated in keys.items()},
    )
    return OnboardedTenant(
        tenant=tenant,
        live_key=keys[ApiKey.Mode.LIVE].raw_key if keys else "",
        test_key=keys[ApiKey.Mode.TEST].raw_key if keys else "",
    )


def _shown(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "(none)" if value in ("", None, [], {}) else str(value)


@transaction.atomic
def tenant_settings_update(*, tenant: Tenant, actor: Actor, **fields) -> Tenant:
    """Change the tenant's own settings (enabled, webhooks, TTL, limits...): one audit row of old → new values.

    Not its secrets or keys, which have services of their own.
    """
    secrets_fields = {name for mode in ApiKey.Mode.values for name in WebhookSecretFields.of(mode).names}
    if secrets_fields & set(fields):
        raise ValueError("webhook secrets change through tenant_webhook_secret_rotate")
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    changed = {}
    for name, value in fields.items():
        old = getattr(tenant, name)
        if old != value:
            changed[name] = (old, value)
            setattr(tenant, name, value)
    if not changed:
        return tenant
    tenant.full_clean()
    tenant.save(update_fields=list(changed))  # its post_save tells every API key cache (TenantsConfig)
    changes_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.TENANT_CHANGED,
        target_type="tenant",
        changed={name.replace("_", " "): f"{_shown(old)} → {_shown(new)}" for name, (old, new) in changed.items()},
    )
    return tenant


@transaction.atomic
def tenant_webhook_secret_reveal(*, tenant: Tenant, actor: Actor, mode: str = ApiKey.Mode.LIVE) -> str:
    """`mode`'s current signing secret; reading it is recorded, as anyone holding it can forge webhooks."""
    secret = getattr(tenant, WebhookSecretFields.of(mode).current)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_SECRET_REVEALED,
        target_type="webhook_secret",
        target_label=secret_hint(secret),
        extra={"mode": mode},
    )
    return secret


@transaction.atomic
def tenant_webhook_secret_rotate(
    *, tenant: Tenant, actor: Actor, mode: str = ApiKey.Mode.LIVE, overlap: timedelta = WEBHOOK_SECRET_OVERLAP
) -> Tenant:
    """A new secret for `mode`'s events; the previous one keeps signing beside it for `overlap`."""
    fields = WebhookSecretFields.of(mode)
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    current = getattr(tenant, fields.current)
    setattr(tenant, fields.previous, current)
    expires = timezone.now() + overlap if current else None
    setattr(tenant, fields.previous_expires_at, expires)
    setattr(tenant, fields.current, webhook_secret_new())
    tenant.save(update_fields=fields.names)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_SECRET_ROTATED,
        target_type="webhook_secret",
        target_label=secret_hint(getattr(tenant, fields.current)),
        extra={
            "mode": mode,
            "previous": secret_hint(current),
            "previous_signs_until": expires.isoformat() if expires else None,
        },
    )
    return tenant


@transaction.atomic
def membership_add(*, tenant: Tenant, user, actor: Actor, role: str = Role.OWNER) -> Membership:
    """`user` joins the team (an operator's onboarding: an owner by default); recorded if they were not in it.

    Someone already in the team keeps their role (membership_role_change changes it).
    """
    if role not in Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}."})
    membership, created = Membership.objects.get_or_create(tenant=tenant, user=user, defaults={"role": role})
    if created:
        audit_record(
            tenant=tenant,
            actor=actor,
            action=AuditLogEntry.Action.MEMBER_ADDED,
            target_type="membership",
            target_id=str(membership.pk),
            target_label=Actor(user=user).label,
            extra={"role": membership.role},
        )
    return membership


def _publishable_key_audit(actor: Actor, action: str, key: PublishableKey) -> None:
    audit_record(
        tenant=key.tenant,
        actor=actor,
        action=action,
        target_type="publishable_key",
        target_id=str(key.pk),
        target_label=key.key,
        extra={
            "mode": key.mode,
            "label": key.label,
            "allowed_origins": key.allowed_origins,
            "return_urls": key.return_urls,
            "client_sessions_enabled": key.client_sessions_enabled,
        },
    )


@transaction.atomic
def publishable_key_generate(
    *,
    tenant: Tenant,
    mode: str,
    actor: Actor,
    label: str = "",
    allowed_origins=(),
    return_urls=(),
    client_sessions_enabled: bool = False,
    client_age_limit: int | None = None,
    client_notification_url: str = "",
) -> PublishableKey:
    if mode not in ApiKey.Mode.values:
        raise ValueError(f"unknown key mode {mode!r}")
    _lock(tenant)
    active = PublishableKey.objects.filter(tenant=tenant, mode=mode, revoked_at__isnull=True).count()
    if active >= MAX_ACTIVE_KEYS_PER_MODE:
        raise ValidationError(f"This tenant already has {active} active {mode} publishable keys. Revoke one first.")
    key = PublishableKey(
        tenant=tenant,
        mode=mode,
        key=PublishableKey.new_key(mode),
        label=label,
        created_by=actor.user,
        allowed_origins=entries_clean(allowed_origins, origin_normalize),
        return_urls=entries_clean(return_urls, return_url_validate),
        client_sessions_enabled=client_sessions_enabled,
        client_age_limit=client_age_limit,
        client_notification_url=client_notification_url,
    )
    key.full_clean()
    key.save()
    _publishable_key_audit(actor, AuditLogEntry.Action.PUBLISHABLE_KEY_GENERATED, key)
    return key


@transaction.atomic
def publishable_key_update(*, key: PublishableKey, actor: Actor, **fields) -> PublishableKey:
    if "allowed_origins" in fields:
        fields["allowed_origins"] = entries_clean(fields["allowed_origins"], origin_normalize)
    if "return_urls" in fields:
        fields["return_urls"] = entries_clean(fields["return_urls"], return_url_validate)
    for name, value in fields.items():
        setattr(key, name, value)
    key.full_clean()
    key.save(update_fields=list(fields))
    _publishable_key_audit(actor, AuditLogEntry.Action.PUBLISHABLE_KEY_CHANGED, key)
    return key


@transaction.atomic
def publishable_key_revoke(*, key: PublishableKey, actor: Actor) -> PublishableKey:
    revoked = PublishableKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db()
    if revoked:
        _publishable_key_audit(actor, AuditLogEntry.Action.PUBLISHABLE_KEY_REVOKED, key)
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
