"""Erasure of final sessions: the retention purge, and a partner's redaction of one session (issue 29).

Both go through `_personal_data_erase`: the subject and metadata blanked, every check result (numbers,
birth date) deleted, the flow's leftovers and the finished webhook deliveries deleted, a pending one's
payload rewritten without the erased data. A redaction keeps the row (status, reason, timestamps, for
accounting); the purge then deletes it, its history and its remaining deliveries, keeping one
SessionDailyCount per tenant, mode, creation day and final status for the dashboard's usage chart.

A session whose webhook is still pending (a retry due, a re-send queued) is never purged: it stays
past its retention until the delivery ends, delivered or failed, and the next hourly purge takes it.
The retry schedule is bounded (about 28 hours), so no session is kept forever by it.

Each run also first erases the sealed evidence any final session still holds (sessions_api.evidence): the state
machine erases it as a session ends, and this sweep makes sure nothing outlives that, whatever the path.
"""

import logging
from datetime import UTC, timedelta

from django.db import transaction
from django.db.models import Count, Exists, F, OuterRef
from django.db.models.functions import TruncDate
from django.utils import timezone

from tenants.audit import Actor, audit_record
from tenants.models import AuditLogEntry, Tenant
from webhooks.selectors import pending_deliveries_for_subject
from webhooks.services import (
    subject_deliveries_delete,
    subject_deliveries_erase,
    subjects_with_pending_deliveries_lock,
)

from .events import EVENT_REDACTED, payload_without_personal_data, redacted_event_payload
from .evidence import final_sessions_evidence_erase
from .models import (
    AgeCredentialResult,
    AgeEstimationResult,
    AgePassResult,
    DigitalIdRequest,
    DocumentResult,
    LaunchCode,
    LivenessResult,
    SessionDailyCount,
    SessionEvent,
    Status,
    VerificationSession,
)
from .state_machine import session_event_enqueue

logger = logging.getLogger(__name__)
BATCH_SIZE = 500
FINAL_STATUSES = (Status.APPROVED, Status.DENIED)
# Every model that holds what a session's checks found or what its flow left: erased with the subject and metadata.
PERSONAL_DATA_MODELS = (
    AgeEstimationResult,
    LivenessResult,
    DocumentResult,
    AgeCredentialResult,
    AgePassResult,  # a document pass's thresholds give the holder's age in years
    DigitalIdRequest,
    LaunchCode,
)


def final_sessions_purge(*, now=None) -> int:
    """Purge every tenant's expired final sessions, in batches of one transaction each; the number deleted."""
    now = now or timezone.now()
    erased = final_sessions_evidence_erase()
    if erased:
        logger.warning("retention purge erased the evidence still kept by %d final sessions", erased)
    purged = 0
    for tenant in Tenant.objects.only("id", "retention_days"):
        cutoff = now - timedelta(days=tenant.retention_days)
        while batch := _tenant_batch_purge(tenant=tenant, cutoff=cutoff):
            purged += batch
    if purged:
        logger.info("retention purge deleted %d final sessions", purged)
    return purged


@transaction.atomic
def _tenant_batch_purge(*, tenant: Tenant, cutoff) -> int:
    ids = list(
        VerificationSession.objects.select_for_update(skip_locked=True)
        .filter(tenant=tenant, status__in=FINAL_STATUSES, finalized_at__lt=cutoff)
        # A session whose webhook is not yet delivered: purging it would drop an event never sent.
        .exclude(Exists(pending_deliveries_for_subject(tenant=tenant, subject_ref=OuterRef("id"))))
        .values_list("id", flat=True)[:BATCH_SIZE]
    )
    if not ids:
        return 0
    # The deliveries are locked too and checked again: a re-send committed since the query above keeps its session.
    resent = subjects_with_pending_deliveries_lock(tenant=tenant, subject_refs=ids)
    ids = [session_id for session_id in ids if session_id not in resent]
    if not ids:
        return 0
    rows = (
        VerificationSession.objects.filter(id__in=ids)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values("mode", "day", "status")
        .annotate(count=Count("id"))
    )
    for row in rows:
        counted, _ = SessionDailyCount.objects.get_or_create(
            tenant=tenant,
            mode=row["mode"],
            day=row["day"],
            status=row["status"],
        )
        SessionDailyCount.objects.filter(pk=counted.pk).update(count=F("count") + row["count"])
    _personal_data_erase(tenant=tenant, ids=ids, now=timezone.now())
    subject_deliveries_delete(tenant=tenant, subject_refs=ids)
    VerificationSession.objects.filter(id__in=ids).delete()
    return len(ids)


class SessionNotFinal(Exception):
    """Only a final session can be redacted: an open one is still being verified."""


def _personal_data_erase(*, tenant: Tenant, ids: list[str], now) -> None:
    """Erase what identifies a person from these final sessions, in the caller's transaction (purge, redaction)."""
    for model in PERSONAL_DATA_MODELS:
        model.objects.filter(session_id__in=ids).delete()
    VerificationSession.objects.filter(id__in=ids).update(subject="", metadata={}, redacted_at=now)
    # An event not yet delivered is still owed to the partner: sent, but without what was erased.
    subject_deliveries_erase(tenant=tenant, subject_refs=ids, scrub=payload_without_personal_data)


@transaction.atomic
def session_redact(*, session_id: str, actor: Actor, cause: str) -> VerificationSession:
    """Erase a final session's personal data (subject, metadata, results); idempotent.

    The first redaction is recorded in the session's history (`cause`: where it was asked) and in the
    tenant's audit log (`actor`: who asked, an API key or a member), whichever door it came through, and
    sends the `verification.redacted` event to a tenant that opted into it; a second one changes nothing.
    """
    session = VerificationSession.objects.select_for_update().select_related("tenant").get(pk=session_id)
    if session.status not in FINAL_STATUSES:
        raise SessionNotFinal(session_id)
    if session.redacted_at is not None:
        return session
    _personal_data_erase(tenant=session.tenant, ids=[session.id], now=timezone.now())
    session.refresh_from_db()
    SessionEvent.objects.create(
        session=session, from_status=session.status, to_status=session.status, reason=session.reason, cause=cause
    )
    audit_record(
        tenant=session.tenant,
        actor=actor,
        action=AuditLogEntry.Action.SESSION_REDACTED,
        target_type="session",
        target_id=session.pk,
        target_label=session.pk,
        extra={"mode": session.mode, "status": session.status},
    )
    session_event_enqueue(session, EVENT_REDACTED, redacted_event_payload(session))
    logger.info("session %s redacted: %s", session.id, cause)
    return session
