"""Opt-in events (issue 29): verification.started and verification.requires_input, once per occurrence, signed."""

import json

import pytest
from django.test import Client
from standardwebhooks.webhooks import Webhook

from sessions_api.state_machine import session_transition
from tests.support.flow import start_path
from webhooks.models import WebhookDelivery

HOOK = "https://partner.example.com/hooks/ageverify"


def _opt_in(tenant, mode, *events):
    tenant.webhook_extra_events = {mode: list(events)}
    tenant.save(update_fields=["webhook_extra_events"])


def _events(session_id):
    return [
        (row.event_type, json.loads(row.payload)["data"])
        for row in WebhookDelivery.objects.filter(subject_ref=session_id).order_by("created_at")
    ]


def test_opening_the_flow_sends_started_once_however_often_it_is_opened(sandbox_api, onboarded):
    _opt_in(onboarded.tenant, "test", "verification.started")
    created = sandbox_api.create_session(notification_url=HOOK, metadata={"orderId": "A-1"})

    browser, second_tab = Client(), Client()
    assert browser.get(start_path(created["verificationUrl"]), follow=True).status_code == 200
    browser.get("/flow/consent")  # a reload
    second_tab.get(start_path(created["verificationUrl"]), follow=True)

    [(event, data)] = _events(created["sessionId"])
    assert event == "verification.started"
    assert data == {
        "sessionId": created["sessionId"],
        "subject": "user-42",
        "status": "initiated",
        "ageLimit": 18,
        "mode": "test",
        "metadata": {"orderId": "A-1"},
    }


def test_without_the_opt_in_opening_the_flow_queues_nothing(sandbox_api, onboarded):
    _opt_in(onboarded.tenant, "live", "verification.started")  # the other mode only
    created = sandbox_api.create_session(notification_url=HOOK)
    Client().get(start_path(created["verificationUrl"]), follow=True)
    assert _events(created["sessionId"]) == []


def test_each_request_for_a_document_or_a_retake_sends_requires_input(api, onboarded):
    _opt_in(onboarded.tenant, "live", "verification.requires_input")
    session_id = api.create_session(notification_url=HOOK)["sessionId"]

    session_transition(session_id=session_id, to="processing", cause="selfie submitted")
    session_transition(session_id=session_id, to="initiated", cause="no face", message="Show your face")
    session_transition(session_id=session_id, to="processing", cause="selfie submitted")
    session_transition(session_id=session_id, to="requires_doc", cause="face too close to the limit")

    assert [(event, data["status"], data["input"]) for event, data in _events(session_id)] == [
        ("verification.requires_input", "initiated", "selfie"),
        ("verification.requires_input", "requires_doc", "document"),
    ]


def test_the_default_is_still_completed_only(api, onboarded):
    session_id = api.create_session(notification_url=HOOK)["sessionId"]
    session_transition(session_id=session_id, to="processing", cause="selfie submitted")
    session_transition(session_id=session_id, to="requires_doc", cause="face too close to the limit")
    api.post(f"/v1/sessions/{session_id}/cancel")
    assert [event for event, _ in _events(session_id)] == ["verification.completed"]


@pytest.mark.usefixtures("celery_worker")
def test_a_started_event_reaches_the_receiver_signed(sandbox_api, onboarded, receiver):
    _opt_in(onboarded.tenant, "test", "verification.started")
    created = sandbox_api.create_session(notification_url=receiver.url())
    Client().get(start_path(created["verificationUrl"]), follow=True)

    [request] = receiver.wait_for(1)
    payload = Webhook(onboarded.tenant.test_webhook_secret).verify(request.body, request.headers)
    assert (payload["event"], payload["data"]["sessionId"]) == ("verification.started", created["sessionId"])
