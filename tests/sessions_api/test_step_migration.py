"""Migration 0003: existing sessions get their step, and existing retakes their user-facing message."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.factories import TenantFactory

BEFORE = [("sessions_api", "0002_idempotency_per_mode")]
AFTER = [("sessions_api", "0003_session_step_event_message")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def migrator(transactional_db):
    """Migrates this test's database; whatever happens, the test leaves it fully migrated."""
    yield _migrate
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def test_the_step_and_the_retake_message_are_backfilled_from_the_history(migrator):
    apps = migrator(BEFORE)
    tenant = TenantFactory()  # the tenants app is not migrated back: today's model
    Session = apps.get_model("sessions_api", "VerificationSession")
    Event = apps.get_model("sessions_api", "SessionEvent")

    def session(session_id, status, history):
        made = Session.objects.create(
            id=session_id,
            tenant_id=tenant.pk,
            mode="live",
            subject="u",
            age_limit=18,
            status=status,
            token_hash="0" * 64,
            expires_at=timezone.now() + timedelta(hours=1),
        )
        for from_status, to_status, cause in history:
            Event.objects.create(session=made, from_status=from_status, to_status=to_status, cause=cause)

    session(
        "ses_selfie_retake",
        "initiated",
        [
            ("initiated", "processing", "selfie submitted"),
            ("processing", "initiated", "retake: We could not find a face. Try again."),
        ],
    )
    session(
        "ses_document_analysing",
        "processing",
        [
            ("initiated", "processing", "selfie submitted"),
            ("processing", "requires_doc", "selfie analysed"),
            ("requires_doc", "processing", "document submitted"),
        ],
    )
    session("ses_selfie_analysing", "processing", [("initiated", "processing", "selfie submitted")])

    apps = migrator(AFTER)
    Session = apps.get_model("sessions_api", "VerificationSession")
    Event = apps.get_model("sessions_api", "SessionEvent")
    steps = dict(Session.objects.values_list("id", "step"))
    assert steps == {
        "ses_selfie_retake": "selfie",
        "ses_document_analysing": "document",
        "ses_selfie_analysing": "selfie",
    }
    retake = Event.objects.get(session_id="ses_selfie_retake", to_status="initiated")
    assert retake.message == "We could not find a face. Try again."
    assert retake.cause == "retake: We could not find a face. Try again."  # the operator's record is kept
    assert set(Event.objects.exclude(pk=retake.pk).values_list("message", flat=True)) == {""}
