"""The dashboard's actions: each one wraps a tenants/webhooks service and writes its audit entry in one transaction."""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from tenants.models import ApiKey, PublishableKey, Tenant, WebhookSecretFields
from tenants.services import (
    GeneratedKey,
    api_key_generate,
    api_key_revoke,
    publishable_key_generate,
    publishable_key_revoke,
    publishable_key_update,
    tenant_webhook_secret_rotate,
)
from webhooks.models import WebhookDelivery
from webhooks.selectors import default_notification_url

from .models import AuditLogEntry

# More live keys than this is a sign of keys being made instead of rotated; the operator can still add more.
MAX_ACTIVE_KEYS_PER_MODE = 10


@dataclass(frozen=True)
class Actor:
    """Who acts: the signed-in user and the address the request came from."""

    user: object
    ip_address: str | None = None

    @property
    def label(self) -> str:
        email = getattr(self.user, "email", "")
        username = self.user.get_username()
        return f"{username} <{email}>" if email and email != username else username


def audit_record(
    *,
    tenant: Tenant,
    actor: Actor,
    action: str,
    target_type: str,
    target_id: str = "",
    target_label: str = "",
    extra: dict | None = None,
) -> AuditLogEntry:
    return AuditLogEntry.objects.create(
        tenant=tenant,
        actor=actor.user,
        actor_label=actor.label,
        action=action,
        target_type=target_type,
        target_id=target_id,
        target_label=target_label,
        ip_address=actor.ip_address,
        extra=extra or {},
    )


def _check_owned(tenant: Tenant, obj) -> None:
    # Views look objects up in the tenant's own querysets; this guards against a caller that did not.
    if obj.tenant_id != tenant.id:
        raise PermissionError(f"{obj!r} does not belong to tenant {tenant.id}")


@transaction.atomic
def dashboard_api_key_generate(*, tenant: Tenant, actor: Actor, mode: str, label: str = "") -> GeneratedKey:
    Tenant.objects.select_for_update().filter(pk=tenant.pk).first()  # serialize the count check below
    active = ApiKey.objects.filter(tenant=tenant, mode=mode, revoked_at__isnull=True).count()
    if active >= MAX_ACTIVE_KEYS_PER_MODE:
        raise ValidationError(
            f"This tenant already has {active} active {mode} keys. Revoke one you no longer use first."
        )
    generated = api_key_generate(tenant=tenant, mode=mode, label=label, created_by=actor.user)
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


@transaction.atomic
def dashboard_api_key_revoke(*, tenant: Tenant, actor: Actor, api_key: ApiKey) -> ApiKey:
    """Revoke the key (it fails at once). Revoking a key that is already revoked changes and records nothing."""
    _check_owned(tenant, api_key)
    was_active = api_key.revoked_at is None
    api_key = api_key_revoke(api_key=api_key)
    if was_active:
        audit_record(
            tenant=tenant,
            actor=actor,
            action=AuditLogEntry.Action.API_KEY_REVOKED,
            target_type="api_key",
            target_id=str(api_key.pk),
            target_label=api_key.display_prefix,
            extra={"mode": api_key.mode, "label": api_key.label},
        )
    return api_key


@transaction.atomic
def dashboard_webhook_secret_reveal(*, tenant: Tenant, actor: Actor, mode: str = "live") -> str:
    """`mode`'s current signing secret; reading it is recorded, as anyone holding it can forge webhooks."""
    secret = getattr(tenant, WebhookSecretFields.of(mode).current)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_SECRET_REVEALED,
        target_type="webhook_secret",
        target_label=_secret_hint(secret),
        extra={"mode": mode},
    )
    return secret


@transaction.atomic
def dashboard_webhook_secret_rotate(*, tenant: Tenant, actor: Actor, mode: str = "live") -> Tenant:
    """A new secret for `mode`; the previous one keeps signing alongside it for the overlap (24 h)."""
    fields = WebhookSecretFields.of(mode)
    old_hint = _secret_hint(getattr(tenant, fields.current))
    tenant = tenant_webhook_secret_rotate(tenant=tenant, mode=mode)
    expires = getattr(tenant, fields.previous_expires_at)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_SECRET_ROTATED,
        target_type="webhook_secret",
        target_label=_secret_hint(getattr(tenant, fields.current)),
        extra={"mode": mode, "previous": old_hint, "previous_signs_until": expires.isoformat() if expires else None},
    )
    return tenant


@transaction.atomic
def dashboard_delivery_resend(*, tenant: Tenant, actor: Actor, delivery: WebhookDelivery) -> WebhookDelivery:
    from webhooks.services import delivery_resend

    _check_owned(tenant, delivery)
    resent = delivery_resend(delivery=delivery)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_RESENT,
        target_type="webhook_delivery",
        target_id=resent.pk,
        target_label=f"{delivery.event_type} {delivery.subject_ref}".strip(),
        extra={"original": delivery.pk, "url": delivery.url},
    )
    return resent


@transaction.atomic
def dashboard_webhook_address_set(*, tenant: Tenant, actor: Actor, mode: str, url: str) -> None:
    from webhooks.services import webhook_endpoint_set

    previous = default_notification_url(tenant=tenant, mode=mode)
    if url == previous:
        return
    webhook_endpoint_set(tenant=tenant, mode=mode, url=url)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_ADDRESS_CHANGED,
        target_type="webhook_address",
        target_id=mode,
        target_label=url or "(none)",
        extra={"mode": mode, "previous_address": previous or None},
    )


@transaction.atomic
def dashboard_session_redact(*, tenant: Tenant, actor: Actor, session_id: str):
    """Erase a final session's personal data (the API's redaction), recorded in the audit log once."""
    from sessions_api.retention import session_redact

    session = session_redact(session_id=session_id, cause=f"redacted in the dashboard by {actor.label}")
    if not AuditLogEntry.objects.filter(
        tenant=tenant, action=AuditLogEntry.Action.SESSION_REDACTED, target_id=session.pk
    ).exists():
        audit_record(
            tenant=tenant,
            actor=actor,
            action=AuditLogEntry.Action.SESSION_REDACTED,
            target_type="session",
            target_id=session.pk,
            target_label=session.pk,
            extra={"mode": session.mode, "status": session.status},
        )
    return session


@transaction.atomic
def dashboard_webhook_events_set(*, tenant: Tenant, actor: Actor, mode: str, events: list[str]) -> None:
    """Choose the optional events sent for `mode`, besides verification.completed (always sent)."""
    tenant = Tenant.objects.select_for_update().get(pk=tenant.pk)
    chosen = dict(tenant.webhook_extra_events or {})
    previous = sorted(chosen.get(mode, []))
    events = sorted(set(events))
    if events == previous:
        return
    chosen[mode] = events
    Tenant.objects.filter(pk=tenant.pk).update(webhook_extra_events=chosen)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_EVENTS_CHANGED,
        target_type="webhook_events",
        target_id=mode,
        target_label=", ".join(events) or "(verification.completed only)",
        extra={"mode": mode, "events": events, "previous_events": previous},
    )


@transaction.atomic
def dashboard_webhook_test_send(*, tenant: Tenant, actor: Actor, mode: str, url: str) -> WebhookDelivery:
    from webhooks.services import webhook_test_send

    delivery = webhook_test_send(tenant=tenant, mode=mode, url=url)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.WEBHOOK_TEST_SENT,
        target_type="webhook_delivery",
        target_id=delivery.pk,
        target_label=delivery.event_type,
        extra={"mode": mode, "url": url},
    )
    return delivery


def _secret_hint(secret: str) -> str:
    """Enough of a secret to tell two apart in the log (its last 4 characters), never enough to use it."""
    return f"whsec_…{secret[-4:]}" if secret else ""


def _publishable_key_audit(tenant, actor, action, key: PublishableKey) -> None:
    audit_record(
        tenant=tenant,
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
def dashboard_publishable_key_generate(*, tenant: Tenant, actor: Actor, mode: str, settings: dict) -> PublishableKey:
    Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
    active = PublishableKey.objects.filter(tenant=tenant, mode=mode, revoked_at__isnull=True).count()
    if active >= MAX_ACTIVE_KEYS_PER_MODE:
        raise ValidationError(f"This tenant already has {active} active {mode} publishable keys. Revoke one first.")
    key = publishable_key_generate(tenant=tenant, mode=mode, created_by=actor.user, **settings)
    _publishable_key_audit(tenant, actor, AuditLogEntry.Action.PUBLISHABLE_KEY_GENERATED, key)
    return key


@transaction.atomic
def dashboard_publishable_key_update(
    *, tenant: Tenant, actor: Actor, key: PublishableKey, settings: dict
) -> PublishableKey:
    _check_owned(tenant, key)
    key = publishable_key_update(key=key, **settings)
    _publishable_key_audit(tenant, actor, AuditLogEntry.Action.PUBLISHABLE_KEY_CHANGED, key)
    return key


@transaction.atomic
def dashboard_publishable_key_revoke(*, tenant: Tenant, actor: Actor, key: PublishableKey) -> PublishableKey:
    _check_owned(tenant, key)
    was_active = key.is_active
    key = publishable_key_revoke(key=key)
    if was_active:
        _publishable_key_audit(tenant, actor, AuditLogEntry.Action.PUBLISHABLE_KEY_REVOKED, key)
    return key
