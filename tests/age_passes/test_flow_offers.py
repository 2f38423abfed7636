"""Where the flow offers age passes: "Use my age pass" on the first page, "Save an age pass" on the result page.

What a passkey's answer proves is checked in the browser (tests/e2e/test_age_pass.py); these tests cover the
offers, the options the browser is given, and the refusals that need no authenticator.
"""

import json

from django.test import Client

from age_passes.models import AgePassChallenge
from sessions_api.models import Reason, Status
from tests.support.flow import approve, open_flow, save_right_give

SAVE_BUTTON = "Save an age pass on this device"
USE_BUTTON = "Use my age pass"


def _post(visitor, path, body=None):
    response = visitor.client.post(path, data=json.dumps(body or {}), content_type="application/json")
    return response.status_code, response.json()


def test_the_first_page_offers_the_pass_only_where_the_tenant_accepts_passes(live_visitor, api, policy):
    assert USE_BUTTON in live_visitor.client.get("/flow/").content.decode()

    policy.accept_passes = False
    policy.save()
    elsewhere = open_flow(api)
    assert USE_BUTTON not in elsewhere.client.get("/flow/").content.decode()
    status, answer = _post(elsewhere, "/flow/age-pass/use/options")
    assert (status, answer["error"]) == (409, "unavailable")


def test_a_sandbox_session_is_never_offered_a_pass(sandbox_api, policy):
    visitor = open_flow(sandbox_api)
    assert USE_BUTTON not in visitor.client.get("/flow/").content.decode()


def test_the_use_options_ask_for_user_verification_on_the_service_s_own_domain(live_visitor, policy, settings):
    settings.PUBLIC_BASE_URL = "https://verify.example.org"
    status, answer = _post(live_visitor, "/flow/age-pass/use/options")

    assert status == 200
    options = answer["publicKey"]
    assert (options["rpId"], options["userVerification"]) == ("verify.example.org", "required")
    assert options["allowCredentials"] == []  # discoverable: the service names no credential
    _, again = _post(live_visitor, "/flow/age-pass/use/options")
    assert again["publicKey"]["challenge"] != options["challenge"]


def test_an_answer_that_is_not_a_passkey_s_is_refused_and_the_session_stays_open(live_visitor, policy):
    status, answer = _post(live_visitor, "/flow/age-pass/use", {"credential": {"id": "x", "response": {}}})
    assert (status, answer["approved"], answer["code"]) == (200, False, "malformed")

    status, answer = _post(live_visitor, "/flow/age-pass/use", {"credential": "not an object"})
    assert (status, answer["error"]) == (400, "malformed")
    response = live_visitor.client.post("/flow/age-pass/use", data=b"{", content_type="application/json")
    assert (response.status_code, response.json()["error"]) == (400, "malformed_json")
    assert live_visitor.session.status == Status.INITIATED


def test_the_result_page_of_a_document_approval_offers_to_save_a_pass_and_stays(live_visitor, policy):
    save_right_give(live_visitor)
    approve(live_visitor.session_id)
    page = live_visitor.client.get("/flow/result").content.decode()

    assert SAVE_BUTTON in page
    assert 'http-equiv="refresh"' not in page  # the user has time to decide
    status, answer = _post(live_visitor, "/flow/age-pass/save/options")
    selection = answer["publicKey"]["authenticatorSelection"]
    assert status == 200
    assert (selection["residentKey"], selection["userVerification"]) == ("required", "required")
    assert answer["publicKey"]["user"]["name"] == "Age pass: 19+"  # names no one
    assert answer["publicKey"]["attestation"] == "none"


def test_no_pass_is_offered_after_an_approval_by_a_pass_or_where_saving_is_off(live_visitor, api, policy, settings):
    save_right_give(live_visitor)
    approve(live_visitor.session_id, reason=Reason.AGE_ESTIMATION)
    assert SAVE_BUTTON in live_visitor.client.get("/flow/result").content.decode()

    settings.AGE_PASS_METHODS = ["document"]  # the deployment saves document approvals only
    assert SAVE_BUTTON not in live_visitor.client.get("/flow/result").content.decode()
    status, answer = _post(live_visitor, "/flow/age-pass/save/options")
    assert (status, answer["error"]) == (409, "unavailable")

    policy.offer_saving = False
    policy.save()
    other = open_flow(api, callback_url="https://shop.example.com/done")
    save_right_give(other)
    approve(other.session_id)
    page = other.client.get("/flow/result").content.decode()
    assert SAVE_BUTTON not in page
    assert 'http-equiv="refresh"' in page


def test_the_user_s_own_page_is_reached_without_a_session_and_asks_the_passkey(client, db, settings):
    settings.PUBLIC_BASE_URL = "https://verify.example.org"
    page = client.get("/flow/age-pass/")
    assert page.status_code == 200
    assert "Show my age pass" in page.content.decode() and "Delete my age pass" in page.content.decode()

    options = client.post("/flow/age-pass/manage/options", data="{}", content_type="application/json").json()
    assert (options["publicKey"]["rpId"], options["publicKey"]["userVerification"]) == (
        "verify.example.org",
        "required",
    )
    refused = client.post(
        "/flow/age-pass/manage",
        data=json.dumps({"action": "delete", "credential": {}}),
        content_type="application/json",
    )
    assert (refused.status_code, refused.json()["error"]) == (400, "malformed")


def test_a_redacted_session_is_refused_a_pass_with_a_json_reason(live_visitor, api, policy):
    save_right_give(live_visitor)
    approve(live_visitor.session_id)
    assert api.post(f"/v1/sessions/{live_visitor.session_id}/redact").status_code == 200

    assert SAVE_BUTTON not in live_visitor.client.get("/flow/result").content.decode()
    for path in ("/flow/age-pass/save/options", "/flow/age-pass/save"):
        status, answer = _post(live_visitor, path, {"credential": {}})
        assert (status, answer["error"]) == (409, "session_redacted")
        assert "erased" in answer["message"]


def test_the_anonymous_manage_options_are_rate_limited_per_address_with_retry_after(client, db):
    def ask(client):
        return client.post("/flow/age-pass/manage/options", data="{}", content_type="application/json")

    answers = [ask(client) for _ in range(40)]

    statuses = [answer.status_code for answer in answers]
    assert 429 in statuses and set(statuses) == {200, 429}
    limited = answers[statuses.index(429)]
    assert limited.json()["error"] == "rate_limited" and int(limited["Retry-After"]) >= 1
    assert AgePassChallenge.objects.count() == statuses.count(200) <= 10  # a refused ask stores nothing
    elsewhere = Client(REMOTE_ADDR="198.51.100.9")
    assert ask(elsewhere).status_code == 200
