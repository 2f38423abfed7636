"""POST /v1/sessions/{id}/redact (issue 29): a final session's personal data erased, its accounting kept."""

from datetime import date

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from sessions_api.models import DocumentResult, LivenessResult, SessionEvent, VerificationSession
from sessions_api.retention import PERSONAL_DATA_MODELS
from sessions_api.state_machine import Results, session_transition
from tests.support.assertions import assert_problem
from tests.support.receiver import Reply
from tests.support.waiting import wait_until
from tests.support.webhooks import finalize_with_webhook
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookDelivery

PERSONAL = "holder-4711"


def _approved_by_document(api, **fields) -> str:
    session_id = api.create_session(subject=PERSONAL, metadata={"orderId": "A-1042"}, **fields)["sessionId"]
    session_transition(
        session_id=session_id,
        to="processing",
        cause="selfie submitted",
        results=Results(
            liveness={"is_live": True, "liveness_score": 0.97},
            age_estimation={"estimated_age": 19.4, "age_confidence": 0.81},
        ),
    )
    session_transition(session_id=session_id, to="requires_doc", cause="face too close to the limit")
    session_transition(session_id=session_id, to="processing", cause="document submitted")
    session_transition(
        session_id=session_id,
        to="approved",
        reason="document",
        cause="document valid",
        results=Results(
            document={"document_kind": "passport", "birthdate": date(2004, 5, 17), "true_age": 21, "expiry_date": None}
        ),
    )
    return session_id


def test_redacting_erases_subject_metadata_and_results_and_keeps_status_reason_and_times(api):
    session_id = _approved_by_document(api)
    before = api.get(f"/v1/sessions/{session_id}").json()
    assert before["validateDoc"]["birthdate"] == "2004-05-17T00:00:00.000Z"

    response = api.post(f"/v1/sessions/{session_id}/redact")

    assert response.status_code == 200
    redacted = response.json()
    assert redacted == api.get(f"/v1/sessions/{session_id}").json()
    session = redacted["session"]
    assert (session["subject"], session["metadata"]) == ("", {})
    assert (redacted["ageEstimation"], redacted["liveness"], redacted["validateDoc"], redacted["ageCredential"]) == (
        None,
        None,
        None,
        None,
    )
    kept = ("sessionId", "status", "reason", "ageLimit", "mode", "createdAt", "expiresAt")
    assert {k: session[k] for k in kept} == {k: before["session"][k] for k in kept}
    assert session["redactedAt"] is not None
    listed = api.get("/v1/sessions").content
    assert PERSONAL.encode() not in listed and b"A-1042" not in listed and b"2004-05-17" not in listed
    assert not DocumentResult.objects.filter(session_id=session_id).exists()
    assert not LivenessResult.objects.filter(session_id=session_id).exists()
    assert PERSONAL not in str(VerificationSession.objects.filter(pk=session_id).values().get())


def test_redacting_twice_answers_the_same_and_changes_nothing(api):
    session_id = _approved_by_document(api)
    first = api.post(f"/v1/sessions/{session_id}/redact").json()
    second = api.post(f"/v1/sessions/{session_id}/redact")
    assert second.status_code == 200
    assert second.json() == first
    # Recorded once in the session's history (the audit of who asked).
    causes = list(VerificationSession.objects.get(pk=session_id).events.values_list("cause", flat=True))
    assert sum("redacted through the API" in cause for cause in causes) == 1


def test_an_open_session_cannot_be_redacted(api):
    session_id = api.create_session(subject=PERSONAL)["sessionId"]
    body = assert_problem(api.post(f"/v1/sessions/{session_id}/redact"), 409, "session_not_final")
    assert "cancel" in body["detail"].lower()
    assert api.get(f"/v1/sessions/{session_id}").json()["session"]["subject"] == PERSONAL


def test_redact_sees_only_the_keys_own_sessions(api, sandbox_api):
    session_id = _approved_by_document(api)
    assert_problem(sandbox_api.post(f"/v1/sessions/{session_id}/redact"), 404, "session_not_found")
    assert_problem(api.post("/v1/sessions/ses_01K8ZJ3Q4T9V2N6XH5C7WYRB3D/redact"), 404, "session_not_found")
    assert api.get(f"/v1/sessions/{session_id}").json()["session"]["subject"] == PERSONAL


def test_redacting_needs_a_key(anonymous_api, api):
    session_id = _approved_by_document(api)
    assert anonymous_api.post(f"/v1/sessions/{session_id}/redact").status_code == 401


@pytest.mark.usefixtures("celery_worker")
def test_an_opted_in_tenant_gets_one_signed_redacted_event_and_the_past_delivery_is_erased(api, onboarded, receiver):
    onboarded.tenant.webhook_extra_events = {"live": ["verification.redacted"]}
    onboarded.tenant.save(update_fields=["webhook_extra_events"])
    session = finalize_with_webhook(api, receiver.url(), subject=PERSONAL, metadata={"orderId": "A-1042"})
    [completed] = receiver.wait_for(1)
    wait_until(lambda: WebhookDelivery.objects.filter(subject_ref=session["sessionId"], status="delivered").exists())

    api.post(f"/v1/sessions/{session['sessionId']}/redact")
    api.post(f"/v1/sessions/{session['sessionId']}/redact")

    _, redacted = receiver.wait_for(2)
    payload = Webhook(onboarded.tenant.webhook_secret).verify(redacted.body, redacted.headers)
    assert payload["event"] == "verification.redacted"
    assert payload["data"] == {
        "sessionId": session["sessionId"],
        "status": "denied",
        "ageLimit": 18,
        "mode": "live",
        "metadata": {},
    }
    deliveries = WebhookDelivery.objects.filter(subject_ref=session["sessionId"])
    # The completed event's stored copy (subject, metadata) is gone; the redacted event is the one row left.
    assert list(deliveries.values_list("event_type", flat=True)) == ["verification.redacted"]
    assert PERSONAL not in deliveries.get().payload


def test_a_completed_event_still_owed_is_sent_without_what_the_redaction_erased(api, onboarded, receiver):
    session_id = _approved_by_document(api, notification_url=receiver.url())
    delivery = WebhookDelivery.objects.get(subject_ref=session_id)
    receiver.script(Reply(status=500), Reply(status=200))
    assert webhook_delivery_attempt(delivery_id=delivery.pk).status_code == 500  # pending: a retry is due

    assert api.post(f"/v1/sessions/{session_id}/redact").status_code == 200
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now())
    webhook_delivery_attempt(delivery_id=delivery.pk)

    first, retried = receiver.received
    sent = Webhook(onboarded.tenant.webhook_secret).verify(retried.body, retried.headers)
    assert PERSONAL.encode() in first.body
    assert sent["event"] == "verification.completed" and retried.headers["webhook-id"] == delivery.pk
    assert sent["data"] == {
        "sessionId": session_id,
        "subject": "",
        "status": "approved",
        "ageLimit": 18,
        "mode": "live",
        "metadata": {},
    }


def test_a_tenant_that_did_not_opt_in_gets_no_redacted_event(api, onboarded, settings):
    onboarded.tenant.webhooks_enabled = True
    onboarded.tenant.save(update_fields=["webhooks_enabled"])
    session = finalize_with_webhook(api, "https://partner.example.com/hooks", subject=PERSONAL)
    api.post(f"/v1/sessions/{session['sessionId']}/redact")
    # The outbox holds what will be sent: the completed event (rewritten without the subject), nothing else.
    rows = WebhookDelivery.objects.filter(subject_ref=session["sessionId"])
    assert list(rows.values_list("event_type", flat=True)) == ["verification.completed"]
    assert PERSONAL not in rows.get().payload


def _approved_by_age_pass(api) -> str:
    session_id = api.create_session(subject=PERSONAL)["sessionId"]
    session_transition(session_id=session_id, to="processing", cause="age pass presented")
    session_transition(
        session_id=session_id,
        to="approved",
        reason="age_pass",
        cause="age pass used",
        results=Results(age_pass={"method": "document", "thresholds": [18], "proof_age": "under_1_month"}),
    )
    return session_id


def test_redacting_an_age_pass_approval_erases_what_the_pass_proved(api):
    # What a document pass proved (its thresholds) gives the holder's age in years: personal data like the rest.
    session_id = _approved_by_age_pass(api)
    assert api.get(f"/v1/sessions/{session_id}").json()["agePass"]["method"] == "document"

    redacted = api.post(f"/v1/sessions/{session_id}/redact").json()

    assert redacted["agePass"] is None
    assert api.get(f"/v1/sessions/{session_id}").json()["agePass"] is None
    assert redacted["session"]["reason"] == "age_pass"


def test_every_model_that_holds_a_sessions_results_is_erased_by_redaction():
    # A new model that hangs off a session is personal data until shown otherwise: it is either erased with the
    # results, or named here with why it may stay (this test fails when a new one is neither).
    kept = {
        SessionEvent: "the session's history: statuses, reasons and who asked, no personal data",
    }
    hanging = {
        field.related_model
        for field in VerificationSession._meta.get_fields(include_hidden=True)
        if field.auto_created and not field.concrete
    }
    assert hanging - set(kept) == set(PERSONAL_DATA_MODELS), "a model related to a session is neither erased nor kept"
