"""Expiry: an open session past its expiresAt is finalized as denied/expired, by the periodic task or on read."""

from sessions_api.models import VerificationSession
from sessions_api.tasks import sessions_expire_due
from tests.factories import session_past_expiry
from tests.support.waiting import wait_until


def test_reading_an_expired_session_shows_it_denied_as_expired(api):
    session_id = api.create_session()["sessionId"]
    session_past_expiry(session_id)

    body = api.get(f"/v1/sessions/{session_id}").json()

    assert body["session"]["status"] == "denied"
    assert body["session"]["reason"] == "expired"


def test_the_periodic_task_run_by_a_worker_expires_due_sessions(api, celery_worker):
    session_id = api.create_session()["sessionId"]
    fresh_id = api.create_session()["sessionId"]
    session_past_expiry(session_id)

    sessions_expire_due.delay()

    wait_until(lambda: VerificationSession.objects.get(pk=session_id).status == "denied")
    assert VerificationSession.objects.get(pk=session_id).reason == "expired"
    assert VerificationSession.objects.get(pk=fresh_id).status == "initiated"
