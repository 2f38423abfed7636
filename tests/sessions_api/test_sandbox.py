"""POST /v1/test/sessions/{id}/advance: test keys drive a sandbox session through the real state machine."""

import datetime

import pytest
from django.utils import timezone

from checks.results import AgeReading
from sessions_api.age_policy import face_rule
from sessions_api.choices import Reason
from sessions_api.models import SessionEvent
from sessions_api.state_machine import APPROVED_REASONS
from tests.factories import session_past_expiry
from webhooks.models import WebhookDelivery


def advance(client, session_id, to, **extra):
    return client.post(f"/v1/test/sessions/{session_id}/advance", {"to": to, **extra})


def history(session_id):
    return [(e.from_status, e.to_status) for e in SessionEvent.objects.filter(session_id=session_id)]


def calibrated_confidence(age_limit, estimated_age):
    rule = face_rule(age_limit=age_limit)
    return round(rule.confidence(AgeReading(estimated_age=estimated_age, faces_used=1)), 2)


def test_approving_a_fresh_session_walks_initiated_processing_approved_with_plausible_numbers(
    sandbox_api, age_policy_file
):
    age_policy_file({18: 27.5})
    session_id = sandbox_api.create_session(age_limit=18)["sessionId"]

    response = advance(sandbox_api, session_id, "approved")

    assert response.status_code == 200
    body = response.json()
    assert body == sandbox_api.get(f"/v1/sessions/{session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "age_estimation")
    # Two years over the policy's threshold, with the policy's own confidence for that estimate.
    assert body["ageEstimation"] == {
        "ageLimit": 18,
        "estimatedAge": 30.0,
        "ageConfidence": calibrated_confidence(18, 30.0),
    }
    assert body["liveness"] == {"isLive": True, "livenessScore": 0.97, "signals": []}
    assert body["validateDoc"] is None
    assert history(session_id) == [("initiated", "processing"), ("processing", "approved")]


def test_an_approving_estimate_clears_the_tenants_stricter_setting(sandbox_api, onboarded, age_policy_file):
    age_policy_file({18: 27.5})
    onboarded.tenant.age_extra_years = 15
    onboarded.tenant.save(update_fields=["age_extra_years"])
    session_id = sandbox_api.create_session(age_limit=18)["sessionId"]

    body = advance(sandbox_api, session_id, "approved").json()

    assert body["ageEstimation"]["estimatedAge"] >= 27.5 + 15


def test_where_the_face_path_is_off_an_approval_comes_from_a_document(sandbox_api, age_policy_file):
    age_policy_file({12: None})
    session_id = sandbox_api.create_session(age_limit=12)["sessionId"]

    body = advance(sandbox_api, session_id, "approved").json()

    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["ageEstimation"] is None and body["validateDoc"]["trueAge"] >= 12


def test_requires_doc_then_approved_goes_through_the_document_step(sandbox_api):
    session_id = sandbox_api.create_session(age_limit=21)["sessionId"]

    first = advance(sandbox_api, session_id, "requires_doc").json()
    body = advance(sandbox_api, session_id, "approved").json()

    assert first["session"]["status"] == "requires_doc"
    assert first["ageEstimation"] == {
        "ageLimit": 21,
        "estimatedAge": 22.0,
        "ageConfidence": calibrated_confidence(21, 22.0),
    }
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["validateDoc"]["trueAge"] == 28
    birthdate = datetime.date.fromisoformat(body["validateDoc"]["birthdate"][:10])
    today = timezone.now().date()
    age = today.year - birthdate.year - ((today.month, today.day) < (birthdate.month, birthdate.day))
    assert age == 28
    assert body["validateDoc"]["birthdate"].endswith("T00:00:00.000Z")
    assert history(session_id) == [
        ("initiated", "processing"),
        ("processing", "requires_doc"),
        ("requires_doc", "processing"),
        ("processing", "approved"),
    ]


def test_denying_at_the_document_step_is_underage_document(sandbox_api):
    session_id = sandbox_api.create_session(age_limit=18)["sessionId"]
    advance(sandbox_api, session_id, "requires_doc")
    advance(sandbox_api, session_id, "processing")

    body = advance(sandbox_api, session_id, "denied").json()

    assert (body["session"]["status"], body["session"]["reason"]) == ("denied", "underage_document")
    assert body["validateDoc"]["trueAge"] == 16


def test_denying_at_the_selfie_step_is_liveness_failed(sandbox_api):
    session_id = sandbox_api.create_session()["sessionId"]

    body = advance(sandbox_api, session_id, "denied").json()

    assert (body["session"]["status"], body["session"]["reason"]) == ("denied", "liveness_failed")
    assert body["liveness"] == {"isLive": False, "livenessScore": 0.12, "signals": []}
    assert body["ageEstimation"] is None


def test_processing_then_a_decision_is_two_calls(sandbox_api, age_policy_file):
    age_policy_file({18: 28.0})
    session_id = sandbox_api.create_session()["sessionId"]

    assert advance(sandbox_api, session_id, "processing").json()["session"]["status"] == "processing"
    assert advance(sandbox_api, session_id, "approved").json()["session"]["reason"] == "age_estimation"


def test_a_final_session_cannot_be_advanced_again(sandbox_api):
    session_id = sandbox_api.create_session()["sessionId"]
    advance(sandbox_api, session_id, "approved")

    response = advance(sandbox_api, session_id, "denied")

    assert response.status_code == 409
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "invalid_transition"
    assert sandbox_api.get(f"/v1/sessions/{session_id}").json()["session"]["status"] == "approved"


@pytest.mark.parametrize("status_now,to", [("processing", "processing"), ("requires_doc", "requires_doc")])
def test_advancing_to_the_current_open_status_is_a_conflict(sandbox_api, status_now, to):
    session_id = sandbox_api.create_session()["sessionId"]
    advance(sandbox_api, session_id, status_now)

    assert advance(sandbox_api, session_id, to).status_code == 409


def test_final_advance_sends_the_completed_webhook_through_the_outbox(sandbox_api):
    session_id = sandbox_api.create_session(notification_url="https://partner.example.com/hooks")["sessionId"]

    advance(sandbox_api, session_id, "approved")

    deliveries = WebhookDelivery.objects.filter(subject_ref=session_id)
    assert deliveries.count() == 1
    assert '"status":"approved"' in deliveries.get().payload


def test_a_live_key_gets_404_even_for_its_own_session(api, sandbox_api):
    live_id = api.create_session()["sessionId"]
    test_id = sandbox_api.create_session()["sessionId"]

    for session_id in (live_id, test_id):
        response = advance(api, session_id, "approved")
        assert response.status_code == 404
        assert response["Content-Type"] == "application/problem+json"
    assert api.get(f"/v1/sessions/{live_id}").json()["session"]["status"] == "initiated"


def test_a_test_key_cannot_advance_a_live_session_of_its_tenant(api, sandbox_api):
    live_id = api.create_session()["sessionId"]

    response = advance(sandbox_api, live_id, "approved")

    assert response.status_code == 404
    assert response.json()["code"] == "session_not_found"
    assert api.get(f"/v1/sessions/{live_id}").json()["session"]["status"] == "initiated"


def test_unknown_session_is_404(sandbox_api):
    assert advance(sandbox_api, "ses_01JDOESNOTEXIST0000000000000", "approved").json()["code"] == "session_not_found"


@pytest.mark.parametrize(
    "body,field,code",
    [
        ({"to": "initiated"}, "to", "invalid_value"),
        ({"to": "APPROVED"}, "to", "invalid_value"),
        ({"to": 3}, "to", "invalid_type"),
        ({}, "to", "required"),
        ({"to": "approved", "outcome": "document"}, "outcome", "unknown_field"),
        ({"to": "approved", "reason": "expired"}, "reason", "invalid_value"),
        ({"to": "requires_doc", "reason": "document"}, "reason", "invalid_value"),
        ({"to": "denied", "reason": "nope"}, "reason", "invalid_value"),
        ({"to": "denied", "reason": None}, "reason", "invalid_type"),
    ],
)
def test_bad_target_is_a_validation_error(sandbox_api, body, field, code):
    session_id = sandbox_api.create_session()["sessionId"]

    response = sandbox_api.post(f"/v1/test/sessions/{session_id}/advance", body)

    assert response.status_code == 400
    problem = response.json()
    assert problem["code"] == "validation_error"
    assert {"field": field, "code": code} in [{"field": e["field"], "code": e["code"]} for e in problem["errors"]]
    assert sandbox_api.get(f"/v1/sessions/{session_id}").json()["session"]["status"] == "initiated"


def test_advance_needs_a_key_and_json(sandbox_api, anonymous_api):
    session_id = sandbox_api.create_session()["sessionId"]

    assert advance(anonymous_api, session_id, "approved").status_code == 401
    assert (
        sandbox_api.post(
            f"/v1/test/sessions/{session_id}/advance",
            raw="to=approved",
            content_type="application/x-www-form-urlencoded",
        ).status_code
        == 415
    )
    assert sandbox_api.post(f"/v1/test/sessions/{session_id}/advance", raw="{nope").json()["code"] == "malformed_json"


def test_an_expired_sandbox_session_cannot_be_advanced(sandbox_api):
    session_id = sandbox_api.create_session()["sessionId"]
    session_past_expiry(session_id)

    response = advance(sandbox_api, session_id, "approved")

    assert response.status_code == 409
    assert sandbox_api.get(f"/v1/sessions/{session_id}").json()["session"]["reason"] == "expired"


@pytest.mark.parametrize("reason", Reason.values)
def test_a_fresh_sandbox_session_can_end_with_every_reason(sandbox_api, face_path_on, reason):
    session_id = sandbox_api.create_session(notification_url="https://partner.example.com/hooks")["sessionId"]
    to = "approved" if reason in APPROVED_REASONS else "denied"

    response = advance(sandbox_api, session_id, to, reason=reason)

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["session"]["status"], body["session"]["reason"]) == (to, reason)
    assert body == sandbox_api.get(f"/v1/sessions/{session_id}").json()
    assert WebhookDelivery.objects.filter(subject_ref=session_id).count() == 1


def test_an_expired_document_is_read_but_past_its_date(sandbox_api):
    session_id = sandbox_api.create_session(age_limit=18)["sessionId"]

    body = advance(sandbox_api, session_id, "denied", reason="document_expired").json()

    assert body["validateDoc"]["trueAge"] == 25  # old enough: the expiry alone denies it
    assert history(session_id)[-1] == ("processing", "denied")
    assert SessionEvent.objects.filter(session_id=session_id).last().reason == "document_expired"


def test_reasons_end_a_session_where_a_real_one_would(sandbox_api, face_path_on):
    on_document = sandbox_api.create_session()["sessionId"]
    advance(sandbox_api, on_document, "requires_doc")
    processing = sandbox_api.create_session()["sessionId"]
    advance(sandbox_api, processing, "processing")

    # A face cannot approve nor fail liveness once the user is at the document step...
    assert advance(sandbox_api, on_document, "approved", reason="age_estimation").status_code == 409
    assert advance(sandbox_api, on_document, "denied", reason="liveness_failed").status_code == 409
    # ...nor a document decide a selfie being analysed; expiry and cancellation need no analysis.
    assert advance(sandbox_api, processing, "denied", reason="document_invalid").status_code == 409
    assert advance(sandbox_api, on_document, "denied", reason="expired").status_code == 200
    assert history(on_document)[-1] == ("requires_doc", "denied")
    assert advance(sandbox_api, processing, "denied", reason="attempts_exceeded").json()["session"]["reason"] == (
        "attempts_exceeded"
    )


def test_age_estimation_is_refused_where_the_face_path_is_off(sandbox_api, age_policy_file):
    age_policy_file({12: None})
    session_id = sandbox_api.create_session(age_limit=12)["sessionId"]

    response = advance(sandbox_api, session_id, "approved", reason="age_estimation")

    assert response.status_code == 409 and response.json()["code"] == "invalid_transition"
    assert sandbox_api.get(f"/v1/sessions/{session_id}").json()["session"]["status"] == "initiated"
