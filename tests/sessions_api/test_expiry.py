"""Expiry: an open session past its expiresAt is finalized as denied/expired, by the periodic task or on read."""
from datetime import timedelta

from django.utils import timezone

from sessions_api.models import VerificationSession
from sessions_api.tasks import sessions_expire_due
from tests.conftest import wait_until


def _expire_now(session_id):
    VerificationSession.objects.filter(pk=session_id).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_reading_an_expired_session_shows_it_denied_as_expired(api):
    session_id = api.create_session()["sessionId"]
    _expire_now(session_id)

    body = api.get(f"/v1/sessions/{session_id}").json()

    assert body["session"]["status"] == "denied"
    assert body["session"]["reason"] == "expired"


def test_the_periodic_task_run_by_a_worker_expires_due_sessions(api, celery_worker):
    session_id = api.create_session()["sessionId"]
    fresh_id = api.create_session()["sessionId"]
    _expire_now(session_id)

    sessions_expire_due.delay()

    wait_until(lambda: VerificationSession.objects.get(pk=session_id).status == "denied")
    assert VerificationSession.objects.get(pk=session_id).reason == "expired"
    assert VerificationSession.objects.get(pk=fresh_id).status == "initiated"
