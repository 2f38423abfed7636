"""Writes on sessions that are not status changes: creating a session, purging old idempotency records."""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone

from core.hot_sql import insert_row
from tenants.models import ApiKey, Tenant

from .models import IdempotencyRecord, Mode, VerificationSession
from .timestamps import truncate_to_ms


def session_token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class SessionRow:
    """A row's columns as attributes (`row.expires_at`), over its {attname: value} dict itself, not a copy."""

    def __init__(self, values: dict):
        self.__dict__ = values


@dataclass(frozen=True)
class CreatedSession:
    values: dict  # the new row: every column, by attribute name (`tenant_id`)
    tenant: Tenant
    token: str  # returned once, by POST /v1/sessions; only its hash is stored

    @property
    def row(self) -> SessionRow:
        """The new row's columns as attributes: enough for the creation's answer, without a model instance."""
        return SessionRow(self.values)

    @cached_property
    def session(self) -> VerificationSession:
        session = VerificationSession.from_db(
            DEFAULT_DB_ALIAS, _SESSION_FIELD_NAMES, [self.values[name] for name in _SESSION_FIELD_NAMES]
        )
        session.tenant = self.tenant
        return session


def session_create(
    *,
    tenant: Tenant,
    api_key: ApiKey,
    subject: str,
    age_limit: int,
    callback_url: str = "",
    cancel_url: str = "",
    notification_url: str = "",
    metadata: dict | None = None,
) -> CreatedSession:
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    # Milliseconds only: `expiresAt` is signed as printed, so the stored value must print the same.
    expires_at = truncate_to_ms(now + timedelta(seconds=tenant.session_ttl_seconds))
    values = {
        **_new_session_defaults(),
        "tenant_id": tenant.pk,
        "mode": Mode.TEST if api_key.mode == ApiKey.Mode.TEST else Mode.LIVE,
        "subject": subject,
        "age_limit": age_limit,
        "callback_url": callback_url or "",
        "cancel_url": cancel_url or "",
        "notification_url": notification_url or "",
        "metadata": metadata or {},
        "token_hash": session_token_hash(token),
        "expires_at": expires_at,
        "created_at": now,
        "updated_at": now,
    }
    # The API's most frequent write: one prepared INSERT of every column, without the ORM's per-save
    # compilation (VerificationSession has no save signals to send). Unless SESSION_CREATE_WAIT_FOR_DISK,
    # its commit does not wait for the disk (docs/integration-api.md, "API behaviour in brief").
    insert_row(VerificationSession, values, wait_for_disk=settings.SESSION_CREATE_WAIT_FOR_DISK)
    return CreatedSession(values=values, tenant=tenant, token=token)


_SESSION_FIELD_NAMES = [field.attname for field in VerificationSession._meta.concrete_fields]


_GIVEN = {
    "tenant_id",
    "mode",
    "subject",
    "age_limit",
    "callback_url",
    "cancel_url",
    "notification_url",
    "metadata",
    "token_hash",
    "expires_at",
    "created_at",
    "updated_at",
}
_DEFAULTED = [field for field in VerificationSession._meta.concrete_fields if field.attname not in _GIVEN]
# Plain values (status, step, counters...) are the same for every session: read once. A callable default
# (the new id, a fresh list) is called for each session, as Field.get_default does.
_CALLED_DEFAULTS = [
    (field.attname, field.default) for field in _DEFAULTED if field.has_default() and callable(field.default)
]
_CONSTANT_DEFAULTS = {
    field.attname: field.get_default() for field in _DEFAULTED if field.attname not in dict(_CALLED_DEFAULTS)
}


def _new_session_defaults() -> dict:
    """The model's default of each column session_create does not set (a new id, status, step, counters...)."""
    return {**_CONSTANT_DEFAULTS, **{name: default() for name, default in _CALLED_DEFAULTS}}


def idempotency_records_purge() -> int:
    """Delete records past the replay window; they hold a (sealed) creation response, flow token included."""
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=timezone.now() - settings.IDEMPOTENCY_TTL).delete()
    return deleted
