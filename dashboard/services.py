"""The dashboard's actions: each one wraps a tenants/webhooks service and writes its audit entry in one transaction."""

import json
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from age_passes.models import AgePassPolicy
from age_passes.selectors import age_pass_policy_of
from age_passes.services import POLICY_FIELDS, age_pass_policy_set
from sessions_api.events import EVENT_COMPLETED, OPTIONAL_EVENTS, event_example
from sessions_api.timestamps import iso_ms
from tenants.branding import tenant_branding_form_values, tenant_branding_update
from tenants.members import (
    IssuedInvitation,
    invitation_accept,
    invitation_create,
    invitation_revoke,
    membership_remove,
    membership_role_change,
)
from tenants.models import (
    ApiKey,
    Invitation,
    Membership,
    PublishableKey,
    Tenant,
    TenantBranding,
    WebhookSecretFields,
)
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
from webhooks.services import TEST_EVENT

from .models import AuditLogEntry

# What "Send test webhook" may send: webhook.test, or the documented example of any event the service sends.
TEST_EVENTS = (TEST_EVENT, EVENT_COMPLETED, *OPTIONAL_EVENTS)
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
def dashboard_webhook_test_send(
    *, tenant: Tenant, actor: Actor, mode: str, url: str, event: str = "webhook.test"
) -> WebhookDelivery:
    """Send `webhook.test`, or the documented example of another event (TEST_EVENTS), now and for `mode`."""
    from webhooks.services import webhook_test_send

    if event == TEST_EVENT:
        delivery = webhook_test_send(tenant=tenant, mode=mode, url=url)
    elif event in TEST_EVENTS:
        sample = event_example(event, mode=mode, timestamp=iso_ms(timezone.now()))
        payload = json.dumps(sample, separators=(",", ":"), ensure_ascii=False).encode()
        delivery = webhook_test_send(tenant=tenant, mode=mode, url=url, event_type=event, payload=payload)
    else:
        raise ValidationError(f"{event!r} cannot be sent as a test event.")
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


# --- The team: invitations, roles, removals; and branding. Each change is one audit entry. ---


def _member_label(user) -> str:
    return Actor(user=user).label


@transaction.atomic
def dashboard_member_invite(*, tenant: Tenant, actor: Actor, email: str, role: str) -> IssuedInvitation:
    issued = invitation_create(tenant=tenant, email=email, role=role, invited_by=actor.user)
    invitation = issued.invitation
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.MEMBER_INVITED,
        target_type="invitation",
        target_id=str(invitation.pk),
        target_label=invitation.email,
        extra={"role": invitation.role, "valid_until": invitation.expires_at.isoformat()},
    )
    return issued


@transaction.atomic
def dashboard_invitation_revoke(*, tenant: Tenant, actor: Actor, invitation: Invitation) -> bool:
    _check_owned(tenant, invitation)
    withdrawn = invitation_revoke(invitation=invitation)
    if withdrawn:
        audit_record(
            tenant=tenant,
            actor=actor,
            action=AuditLogEntry.Action.INVITATION_REVOKED,
            target_type="invitation",
            target_id=str(invitation.pk),
            target_label=invitation.email,
            extra={"role": invitation.role},
        )
    return withdrawn


@transaction.atomic
def dashboard_invitation_accept(*, token: str, actor: Actor) -> Membership:
    """The invited person joins (the actor is them); recorded in the tenant's audit log."""
    membership, invitation = invitation_accept(token=token, user=actor.user)
    audit_record(
        tenant=invitation.tenant,
        actor=actor,
        action=AuditLogEntry.Action.MEMBER_JOINED,
        target_type="membership",
        target_id=str(membership.pk),
        target_label=_member_label(membership.user),
        extra={"role": membership.role, "invited_as": invitation.email},
    )
    return membership


@transaction.atomic
def dashboard_member_role_change(*, tenant: Tenant, actor: Actor, membership: Membership, role: str) -> Membership:
    _check_owned(tenant, membership)
    previous = membership.role
    if role == previous:
        return membership
    membership = membership_role_change(membership=membership, role=role)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.MEMBER_ROLE_CHANGED,
        target_type="membership",
        target_id=str(membership.pk),
        target_label=_member_label(membership.user),
        extra={"role": role, "previous_role": previous},
    )
    return membership


@transaction.atomic
def dashboard_member_remove(*, tenant: Tenant, actor: Actor, membership: Membership) -> None:
    _check_owned(tenant, membership)
    label, role, pk = _member_label(membership.user), membership.role, membership.pk
    membership_remove(membership=membership)
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.MEMBER_REMOVED,
        target_type="membership",
        target_id=str(pk),
        target_label=label,
        extra={"role": role},
    )


BRANDING_FIELDS = {"display_name": "display name", "accent_color": "accent colour", "privacy_notice_url": "privacy URL"}


@transaction.atomic
def dashboard_branding_update(*, tenant: Tenant, actor: Actor, **fields) -> TenantBranding:
    """Save the branding (tenants.branding checks it) and record what changed, old and new values."""
    before = tenant_branding_form_values(tenant)
    old = {name: getattr(before, name) for name in BRANDING_FIELDS}
    old_logo = before.logo_sha256
    branding = tenant_branding_update(tenant=tenant, **fields)
    changed = {
        label: f"{old[name] or '(none)'} → {getattr(branding, name) or '(none)'}"
        for name, label in BRANDING_FIELDS.items()
        if old[name] != getattr(branding, name)
    }
    if branding.logo_sha256 != old_logo:
        changed["logo"] = f"new ({branding.logo_width}×{branding.logo_height})" if branding.logo_sha256 else "removed"
    _settings_changes_record(tenant, actor, AuditLogEntry.Action.BRANDING_CHANGED, "branding", changed)
    return branding


def _settings_changes_record(tenant: Tenant, actor: Actor, action: str, target_type: str, changed: dict) -> None:
    """One audit entry for a settings form's changes ({field: "old → new"}); none when nothing changed."""
    if changed:
        audit_record(
            tenant=tenant,
            actor=actor,
            action=action,
            target_type=target_type,
            target_label=", ".join(changed),
            extra=changed,
        )


def _policy_value(policy, name: str) -> str:
    value = getattr(policy, name)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if name == "minimum_method":
        return policy.get_minimum_method_display()
    return "(deployment's)" if value is None and name == "lifetime_days" else str(value or "(any)")


@transaction.atomic
def dashboard_age_pass_policy_update(*, tenant: Tenant, actor: Actor, **fields) -> AgePassPolicy:
    """Save the tenant's age-pass policy (age_passes checks it) and record what changed, old and new values."""
    before = age_pass_policy_of(tenant=tenant)
    old = {name: _policy_value(before, name) for name in POLICY_FIELDS}
    policy = age_pass_policy_set(tenant=tenant, **fields)
    changed = {
        name.replace("_", " "): f"{old[name]} → {_policy_value(policy, name)}"
        for name in POLICY_FIELDS
        if old[name] != _policy_value(policy, name)
    }
    _settings_changes_record(tenant, actor, AuditLogEntry.Action.AGE_PASS_POLICY_CHANGED, "age_pass_policy", changed)
    return policy
