"""Who may save a pass: only the browser whose submission approved the session, once, within minutes.

The harvest this stops: the partner's backend (or anyone the link leaked to) opens the session's verification
link before the user finishes, and after the user's approval saves the pass on its own authenticator.
"""

import datetime
import json

import pytest
from django.test import Client
from django.utils import timezone

from sessions_api.models import VerificationSession
from tenants.models import Tenant
from tests.support.digital_id import trusted_issuer, wallet_answer
from tests.support.flow import open_flow, start_path
from tests.support.uploads import selfie_form

SAVE_BUTTON = "Save an age pass on this device"


@pytest.fixture
def issuer(onboarded):
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True, digital_id_unsigned_requests=True)
    return trusted_issuer()


def _post(client, path, body=None):
    response = client.post(path, data=json.dumps(body or {}), content_type="application/json")
    return response.status_code, response.json()


def test_only_the_browser_whose_answer_approved_may_save_and_another_holding_the_link_is_told_why(api, policy, issuer):
    user = open_flow(api)
    harvester = Client()  # opened the same link before the user finished
    assert harvester.get(start_path(user.created["verificationUrl"])).status_code == 303

    status, answer = wallet_answer(user, issuer)
    assert (status, answer["status"]) == (200, "approved")

    assert SAVE_BUTTON in user.client.get("/flow/result").content.decode()
    assert SAVE_BUTTON not in harvester.get("/flow/result").content.decode()
    for path in ("/flow/age-pass/save/options", "/flow/age-pass/save"):
        status, refused = _post(harvester, path, {"credential": {}})
        assert (status, refused["error"]) == (403, "not_this_browser")
        assert "only on the device and in the browser that completed this verification" in refused["message"]
    status, options = _post(user.client, "/flow/age-pass/save/options")
    assert status == 200 and options["publicKey"]["challenge"]


def test_a_submitted_selfie_gives_its_browser_the_right_as_an_http_only_cookie(live_visitor, policy):
    response = live_visitor.client.post("/flow/selfie", selfie_form(live_visitor))

    assert response.status_code == 303
    right = response.cookies["av_pass_save"]
    assert right.value and right["httponly"] and right["path"] == "/flow/" and right["samesite"] == "Lax"


def test_no_right_is_given_where_the_tenant_does_not_offer_saving(live_visitor, policy):
    policy.offer_saving = False
    policy.save()
    response = live_visitor.client.post("/flow/selfie", selfie_form(live_visitor))
    assert response.status_code == 303 and "av_pass_save" not in response.cookies


def test_a_save_asked_minutes_after_the_approval_is_refused_as_too_late(api, policy, issuer):
    user = open_flow(api)
    wallet_answer(user, issuer)
    VerificationSession.objects.filter(pk=user.session_id).update(
        finalized_at=timezone.now() - datetime.timedelta(minutes=11)
    )

    assert SAVE_BUTTON not in user.client.get("/flow/result").content.decode()
    status, refused = _post(user.client, "/flow/age-pass/save/options")
    assert (status, refused["error"]) == (409, "save_too_late")
    assert "first minutes after a verification" in refused["message"]
