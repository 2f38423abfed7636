"""A tenant's team: invitations (single use, expiring), roles, and the rule that a tenant keeps an owner.

Each change is one row of the tenant's audit log, written here with the actor who made it.
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .audit import Actor, audit_record
from .models import AuditLogEntry, Invitation, Membership, Role, Tenant

INVITATION_TTL = timedelta(days=7)


class InvitationInvalid(Exception):
    """The link is unknown, used, revoked or expired: the message says which, for the person who opened it."""


@dataclass(frozen=True)
class IssuedInvitation:
    invitation: Invitation
    token: str  # in the email's link only; the database keeps its hash


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _lock_tenant(tenant: Tenant) -> None:
    # Serializes every change to the tenant's team, so two removals cannot both pass the last-owner check.
    Tenant.objects.select_for_update().filter(pk=tenant.pk).first()


def member_users_with_email(email: str):
    """Accounts an invitation to `email` would join (username or email equal to it, case aside)."""
    return get_user_model().objects.filter(Q(email__iexact=email) | Q(username__iexact=email), is_active=True)


@transaction.atomic
def invitation_create(*, tenant: Tenant, email: str, role: str, actor: Actor) -> IssuedInvitation:
    """A new invitation for `email`; earlier pending ones to the same address stop working (a re-send)."""
    email = email.strip().lower()
    if role not in Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}."})
    _lock_tenant(tenant)
    if Membership.objects.filter(tenant=tenant, user__in=member_users_with_email(email)).exists():
        raise ValidationError({"email": f"{email} is already a member of {tenant.name}."})
    now = timezone.now()
    Invitation.objects.filter(tenant=tenant, email=email, accepted_at=None, revoked_at=None).update(revoked_at=now)
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        tenant=tenant,
        email=email,
        role=role,
        token_hash=_token_hash(token),
        invited_by=actor.user,
        expires_at=now + INVITATION_TTL,
    )
    audit_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.MEMBER_INVITED,
        target_type="invitation",
        target_id=str(invitation.pk),
        target_label=invitation.email,
        extra={"role": invitation.role, "valid_until": invitation.expires_at.isoformat()},
    )
    return IssuedInvitation(invitation=invitation, token=token)


def invitation_for_token(token: str, *, lock: bool = False) -> Invitation:
    """The pending invitation the link's token names, or InvitationInvalid saying why it cannot be used."""
    invitations = Invitation.objects.select_related("tenant")
    if lock:
        invitations = invitations.select_for_update(of=("self",))
    invitation = invitations.filter(token_hash=_token_hash(token)).first()
    if invitation is None:
        raise InvitationInvalid("This invitation link is not valid. Ask for a new invitation.")
    if invitation.accepted_at is not None:
        raise InvitationInvalid("This invitation was already used. Sign in instead.")
    if invitation.revoked_at is not None:
        raise InvitationInvalid("This invitation was withdrawn. Ask for a new invitation.")
    if invitation.expires_at <= timezone.now():
        raise InvitationInvalid("This invitation has expired. Ask for a new invitation.")
    return invitation


@transaction.atomic
def invitation_accept(*, token: str, actor: Actor) -> tuple[Membership, Invitation]:
    """The actor joins the invitation's tenant with its role, once; a second use raises InvitationInvalid."""
    user = actor.user
    invitation = invitation_for_token(token, lock=True)
    membership, created = Membership.objects.get_or_create(
        tenant=invitation.tenant, user=user, defaults={"role": invitation.role}
    )
    invitation.accepted_at = timezone.now()
    invitation.accepted_by = user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    audit_record(
        tenant=invitation.tenant,
        actor=actor,
        action=AuditLogEntry.Action.MEMBER_JOINED,
        target_type="membership",
        target_id=str(membership.pk),
        target_label=Actor(user=membership.user).label,
        extra={"role": membership.role, "invited_as": invitation.email},
    )
    return membership, invitation


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor: Actor) -> bool:
    """Withdraw a pending invitation; False when it was no longer pending (nothing changed, nothing recorded)."""
    withdrawn = bool(
        Invitation.objects.filter(pk=invitation.pk, accepted_at=None, revoked_at=None).update(revoked_at=timezone.now())
    )
    if withdrawn:
        audit_record(
            tenant=invitation.tenant,
            actor=actor,
            action=AuditLogEntry.Action.INVITATION_REVOKED,
            target_type="invitation",
            target_id=str(invitation.pk),
            target_label=invitation.email,
            extra={"role": invitation.role},
        )
    return withdrawn


def _refuse_without_owner(tenant: Tenant, membership: Membership) -> None:
    others = Membership.objects.filter(tenant=tenant, role=Role.OWNER).exclude(pk=membership.pk)
    if membership.role == Role.OWNER and not others.exists():
        raise ValidationError(
            f"{membership.user.get_username()} is the last owner of {tenant.name}: make someone else owner first."
        )


@transaction.atomic
def membership_role_change(*, membership: Membership, role: str, actor: Actor) -> Membership:
    if role not in Role.values:
        raise ValidationError(f"Unknown role {role!r}.")
    _lock_tenant(membership.tenant)
    membership = Membership.objects.select_related("user", "tenant").get(pk=membership.pk)
    previous = membership.role
    if role == previous:
        return membership
    if role != Role.OWNER:
        _refuse_without_owner(membership.tenant, membership)
    membership.role = role
    membership.save(update_fields=["role"])
    audit_record(
        tenant=membership.tenant,
        actor=actor,
        action=AuditLogEntry.Action.MEMBER_ROLE_CHANGED,
        target_type="membership",
        target_id=str(membership.pk),
        target_label=Actor(user=membership.user).label,
        extra={"role": role, "previous_role": previous},
    )
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership, actor: Actor) -> None:
    _lock_tenant(membership.tenant)
    membership = Membership.objects.select_related("user", "tenant").get(pk=membership.pk)
    _refuse_without_owner(membership.tenant, membership)
    label, role, pk = Actor(user=membership.user).label, membership.role, membership.pk
    membership.delete()
    audit_record(
        tenant=membership.tenant,
        actor=actor,
        action=AuditLogEntry.Action.MEMBER_REMOVED,
        target_type="membership",
        target_id=str(pk),
        target_label=label,
        extra={"role": role},
    )
