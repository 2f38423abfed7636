"""Builders of dashboard test data: sessions taken through the real state machine, deliveries with attempts."""
from sessions_api.state_machine import Results, session_transition
from tests.factories import VerificationSessionFactory
from webhooks.models import WebhookAttempt, WebhookDelivery


def finished_session(tenant, *, status="approved", notification_url="", subject=None, mode="live"):
    """A session of `tenant` taken through the real state machine to `status`, as the flow would."""
    extra = {"subject": subject} if subject else {}
    session = VerificationSessionFactory(tenant=tenant, notification_url=notification_url, mode=mode, **extra)
    if status == "initiated":
        return session
    session_transition(session_id=session.id, to="processing", cause="selfie submitted", count_attempt=True)
    if status == "approved":
        session_transition(
            session_id=session.id, to="approved", reason="age_estimation", cause="estimated age above the limit",
            results=Results(age_estimation={"estimated_age": 31.5, "age_confidence": 0.87},
                            liveness={"is_live": True, "liveness_score": 0.96}),
        )
    elif status == "denied":
        session_transition(session_id=session.id, to="denied", reason="liveness_failed", cause="liveness failed",
                           results=Results(liveness={"is_live": False, "liveness_score": 0.08}))
    session.refresh_from_db()
    return session


def delivery_with_attempt(tenant, *, status_code=500):
    """A finished session's webhook delivery with one logged attempt, as the sender leaves it."""
    session = finished_session(tenant, notification_url="https://hooks.partner.test/av")
    delivery = WebhookDelivery.objects.get(subject_ref=session.id)
    WebhookAttempt.objects.create(delivery=delivery, number=1, status_code=status_code, latency_ms=120,
                                  response_excerpt="upstream down")
    WebhookDelivery.objects.filter(pk=delivery.pk).update(attempt_count=1)
    return session, delivery

