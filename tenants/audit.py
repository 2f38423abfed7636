"""Who changes a tenant, and the audit row that the service making the change writes in its own transaction.

Every tenant-changing service (keys, webhook secrets and addresses, the team, branding, the pass policy)
takes a keyword-only `actor` and calls `audit_record` inside its transaction, so no door (the dashboard,
the operators' admin, a management command) can make the change without leaving the row.
"""

import getpass
from dataclasses import dataclass

from .models import AuditLogEntry, Tenant

OPERATOR = "AgeVerify operator"


@dataclass(frozen=True)
class Actor:
    """A signed-in person with the address the request came from, or a named command or API key (`user` None)."""

    user: object = None
    ip_address: str | None = None
    name: str = ""  # a command's or an API key's name, when no person is signed in
    role: str = ""  # said after the person's name where they are not the tenant's own staff (OPERATOR)

    @classmethod
    def operator(cls, request) -> "Actor":
        """The operators' admin's signed-in user: a person of the service, not of the tenant."""
        return cls(user=request.user, ip_address=request.META.get("REMOTE_ADDR") or None, role=OPERATOR)

    @classmethod
    def api_key(cls, key, *, ip_address: str | None = None) -> "Actor":
        """A partner's backend, named by the key it called with (the key's shown prefix, never the key)."""
        return cls(name=f"API key {key.display_prefix}", ip_address=ip_address)

    @classmethod
    def command(cls, name: str) -> "Actor":
        """A management command, named with the account that ran it where the system knows one."""
        try:
            account = getpass.getuser()
        except (OSError, KeyError):  # no login name in the environment and none in the password database
            account = ""
        name = f"manage.py {name}"
        return cls(name=f"{name} (run by {account})" if account else name)

    @property
    def label(self) -> str:
        if self.user is None:
            return self.name
        email = getattr(self.user, "email", "")
        username = self.user.get_username()
        person = f"{username} <{email}>" if email and email != username else username
        return f"{person} ({self.role})" if self.role else person


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
    if not isinstance(actor, Actor):
        raise TypeError(f"a change to a tenant needs an Actor, not {actor!r}")
    return AuditLogEntry.objects.create(
        tenant=tenant,
        actor=actor.user,
        actor_label=actor.label[:254],
        action=action,
        target_type=target_type,
        target_id=target_id,
        target_label=target_label[:200],
        ip_address=actor.ip_address,
        extra=extra or {},
    )


def changes_record(*, tenant: Tenant, actor: Actor, action: str, target_type: str, changed: dict) -> None:
    """One audit row for a settings form's changes ({field: "old → new"}); none when nothing changed."""
    if changed:
        audit_record(
            tenant=tenant,
            actor=actor,
            action=action,
            target_type=target_type,
            target_label=", ".join(changed),
            extra=changed,
        )


def secret_hint(secret: str) -> str:
    """Enough of a secret to tell two apart in the log (its last 4 characters), never enough to use it."""
    return f"whsec_…{secret[-4:]}" if secret else ""
