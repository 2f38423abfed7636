"""Every way a session becomes final writes exactly one verification.completed outbox row, only when sending is on."""

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from sessions_api.analysis import document_analyse
from sessions_api.models import VerificationSession
from sessions_api.state_machine import session_transition
from sessions_api.submission import document_path_choose
from sessions_api.tasks import sessions_expire_due
from tenants.models import Tenant
from tests.factories import session_past_expiry
from tests.support.documents import aamva_payload, encode, pdf417_card
from tests.support.flow import start_path
from webhooks.models import WebhookDelivery

HOOK = "https://partner.example.com/hooks/ageverify"


def _underage_document() -> bytes:
    birth = timezone.now().date() - timedelta(days=13 * 365)  # a 12- or 13-year-old, under the limit of 18
    return encode(pdf417_card(aamva_payload(birth=birth.strftime("%m%d%Y"), expiry="01012035")))


def _by_document_decision(api, sandbox_api, session_id, verification_url):
    session = VerificationSession.objects.get(pk=session_id)
    # The document alone decides here (no head turns to send): the tenant's presence policy is off.
    Tenant.objects.filter(pk=session.tenant_id).update(document_presence_required=False)
    document_path_choose(session=session)
    session_transition(
        session_id=session_id, to="processing", expected_from=("requires_doc",), cause="document submitted"
    )
    document_analyse(session_id=session_id, image=_underage_document())  # what the worker runs


def _by_the_periodic_expiry(api, sandbox_api, session_id, verification_url):
    session_past_expiry(session_id)
    sessions_expire_due()


def _by_an_api_read_after_expiry(api, sandbox_api, session_id, verification_url):
    session_past_expiry(session_id)
    assert api.get(f"/v1/sessions/{session_id}").json()["session"]["status"] == "denied"


def _by_cancelling_in_the_web_flow(api, sandbox_api, session_id, verification_url):
    browser = Client()
    assert browser.get(start_path(verification_url)).status_code == 303
    assert browser.post("/flow/cancel").status_code == 303


def _by_the_sandbox_advance_api(api, sandbox_api, session_id, verification_url):
    for to in ("processing", "approved"):
        assert sandbox_api.post(f"/v1/test/sessions/{session_id}/advance", {"to": to}).status_code == 200


PATHS = {
    "document decision": (False, _by_document_decision, ("denied", "underage_document")),
    "periodic expiry": (False, _by_the_periodic_expiry, ("denied", "expired")),
    "expiry on read": (False, _by_an_api_read_after_expiry, ("denied", "expired")),
    "web flow cancel": (False, _by_cancelling_in_the_web_flow, ("denied", "cancelled")),
    "sandbox advance": (True, _by_the_sandbox_advance_api, ("approved", "age_estimation")),
}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("enabled", [True, False], ids=["sending on", "sending off"])
def test_each_path_to_a_final_state_writes_one_delivery_only_when_sending_is_on(
    api, sandbox_api, onboarded, path, enabled, age_policy_file
):
    age_policy_file({18: 28.0})  # the face path on, so a sandbox approval is by age estimation
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(webhooks_enabled=enabled)
    sandbox, finalize, (status, reason) = PATHS[path]
    client = sandbox_api if sandbox else api
    created = client.create_session(notification_url=HOOK, age_limit=18, subject="player-1")
    session_id = created["sessionId"]

    finalize(api, sandbox_api, session_id, created["verificationUrl"])

    session = VerificationSession.objects.get(pk=session_id)
    assert (session.status, session.reason) == (status, reason)
    deliveries = list(WebhookDelivery.objects.filter(subject_ref=session_id))
    if not enabled:
        assert deliveries == []
        return
    [delivery] = deliveries
    mode = "test" if sandbox else "live"
    assert delivery.url == HOOK and delivery.tenant_id == onboarded.tenant.pk and delivery.mode == mode
    assert json.loads(delivery.payload)["data"] == {
        "sessionId": session_id,
        "subject": "player-1",
        "status": status,
        "ageLimit": 18,
        "mode": mode,
        "metadata": {},
    }
