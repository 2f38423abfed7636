"""The digital-ID step through the flow's endpoints, as the page's script drives them, and the API's answer."""

import json
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.utils import timezone

from checks.digital_id.request import PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP
from checks.digital_id.sandbox_wallet import issuer_create, sandbox_issuer, wallet_present
from checks.digital_id.trust import EU_AGE_ATTESTATION
from sessions_api.models import DigitalIdRequest
from tenants.models import Tenant
from tests.support.flow import open_flow
from wallets.trust_anchors import trust_anchors_replace


@pytest.fixture(scope="module")
def issuer():
    return issuer_create(name="Utopia AV issuer", country="UT")


@pytest.fixture
def trusted(db, issuer):
    trust_anchors_replace(source="pem:utopia", issuers=[(issuer.root, [EU_AGE_ATTESTATION])], sandbox=False)
    return issuer


@pytest.fixture
def enabled(onboarded):
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True, digital_id_unsigned_requests=True)


def _origin():
    parts = urlsplit(settings.PUBLIC_BASE_URL)
    return f"{parts.scheme}://{parts.netloc}"


def _post(visitor, path, body):
    response = visitor.client.post(path, json.dumps(body), content_type="application/json")
    return response.status_code, response.json()


def _ask(visitor):
    status, body = _post(visitor, "/flow/digital-id/request", {})
    assert status == 200, body
    return body


def _answer(visitor, asked, issuer, *, over=True, protocol=PROTOCOL_ANNEX_C):
    data = wallet_present(
        asked["digital"],
        issuer=issuer,
        protocol=protocol,
        origin=_origin(),
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": over},
        now=timezone.now(),
    )
    return _post(
        visitor, "/flow/digital-id/response", {"requestId": asked["requestId"], "protocol": protocol, "data": data}
    )


@pytest.mark.parametrize("protocol", [PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP])
def test_a_valid_age_attestation_approves_with_age_credential_and_no_birth_date(api, enabled, trusted, protocol):
    visitor = open_flow(api)
    status, body = _answer(visitor, _ask(visitor), trusted, protocol=protocol)
    assert (status, body["status"], body["next"]) == (200, "approved", "/flow/result")

    read = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (read["session"]["status"], read["session"]["reason"]) == ("approved", "digital_id")
    assert read["validateDoc"] is None and read["ageEstimation"] is None
    credential = read["ageCredential"]
    assert {k: credential[k] for k in ("kind", "docType", "claim", "value", "ageLimit", "issuer")} == {
        "kind": "mdoc",
        "docType": EU_AGE_ATTESTATION,
        "claim": "age_over_18",
        "value": True,
        "ageLimit": 18,
        "issuer": {"country": "UT", "trustSource": "pem:utopia"},
    }
    assert credential["verifiedAt"].endswith("Z")


def test_age_over_18_false_denies_underage_digital_id(api, enabled, trusted):
    visitor = open_flow(api)
    status, body = _answer(visitor, _ask(visitor), trusted, over=False)
    assert body["status"] == "denied"
    read = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert read["session"]["reason"] == "underage_digital_id"
    assert read["ageCredential"]["value"] is False


def test_the_digital_id_can_be_used_at_the_document_step_too(api, enabled, trusted):
    visitor = open_flow(api)
    visitor.client.post("/flow/no-camera")
    assert visitor.session.status == "requires_doc"
    assert b"data-digital-id" in visitor.client.get("/flow/document").content
    assert _answer(visitor, _ask(visitor), trusted)[1]["status"] == "approved"


def test_a_request_is_consumed_by_its_first_answer(api, enabled, trusted):
    visitor = open_flow(api)
    asked = _ask(visitor)
    stranger = issuer_create()
    status, body = _answer(visitor, asked, stranger)
    assert (status, body["status"]) == (200, "initiated")
    assert "could not verify" in body["message"]
    assert DigitalIdRequest.objects.get(pk=asked["requestId"]).state == {}  # the key is wiped

    status, body = _answer(visitor, asked, trusted)  # even a good answer cannot reuse it
    assert (body["status"], "expired" in body["message"]) == ("initiated", True)
    assert visitor.session.digital_id_attempts == 1


def test_three_answers_that_prove_nothing_withdraw_the_step_but_not_the_session(api, enabled, trusted):
    visitor = open_flow(api)
    for _ in range(3):
        _answer(visitor, _ask(visitor), issuer_create())
    status, body = _post(visitor, "/flow/digital-id/request", {})
    assert (status, body["error"]) == (409, "unavailable")
    assert visitor.session.status == "initiated"
    assert b"data-digital-id" not in visitor.client.get("/flow/").content


def test_the_sandbox_issuer_is_refused_on_a_live_session(api, enabled, trusted):
    visitor = open_flow(api)
    status, body = _answer(visitor, _ask(visitor), sandbox_issuer(settings.SECRET_KEY.encode()))
    assert (body["status"], visitor.session.digital_id_attempts) == ("initiated", 1)
    status, body = _post(
        visitor, "/flow/digital-id/test-wallet", {"requestId": _ask(visitor)["requestId"], "over": True}
    )
    assert status == 409  # no test wallet outside the sandbox


def test_the_step_is_not_offered_unless_the_tenant_enabled_it(api, trusted):
    visitor = open_flow(api)
    assert b"data-digital-id" not in visitor.client.get("/flow/").content
    assert _post(visitor, "/flow/digital-id/request", {})[0] == 409


def test_a_live_session_is_not_offered_the_step_without_a_trust_anchor(api, enabled):
    visitor = open_flow(api)
    assert b"data-digital-id" not in visitor.client.get("/flow/").content


def test_the_consent_page_offers_the_step_when_enabled(api, enabled, trusted):
    visitor = open_flow(api)
    page = visitor.client.get("/flow/").content.decode()
    assert "Or use a digital ID" in page and "Test wallet" not in page


@pytest.mark.parametrize(
    "over, status, reason", [(True, "approved", "digital_id"), (False, "denied", "underage_digital_id")]
)
def test_the_sandbox_test_wallet_goes_through_the_real_verifier(sandbox_api, enabled, over, status, reason):
    visitor = open_flow(sandbox_api)
    assert b"Test wallet" in visitor.client.get("/flow/sandbox").content
    asked = _ask(visitor)
    code, wallet = _post(visitor, "/flow/digital-id/test-wallet", {"requestId": asked["requestId"], "over": over})
    assert code == 200 and wallet["protocol"] == PROTOCOL_ANNEX_C
    code, body = _post(visitor, "/flow/digital-id/response", {"requestId": asked["requestId"], **wallet})
    assert body["status"] == status
    read = sandbox_api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert read["session"]["reason"] == reason
    assert read["ageCredential"]["issuer"] == {"country": "UT", "trustSource": "sandbox"}


def test_malformed_bodies_get_a_json_error(api, enabled, trusted):
    visitor = open_flow(api)
    response = visitor.client.post("/flow/digital-id/response", b"[1", content_type="application/json")
    assert (response.status_code, response.json()["error"]) == (400, "malformed_json")
    status, body = _post(visitor, "/flow/digital-id/response", {"requestId": 5, "protocol": None, "data": None})
    assert (status, body["status"]) == (200, "initiated")


def test_without_the_flow_cookie_the_endpoints_refuse(client, db):
    response = client.post("/flow/digital-id/request", "{}", content_type="application/json")
    assert response.status_code == 403


def test_the_step_and_its_messages_speak_the_pages_language(api, enabled, trusted):
    visitor = open_flow(api)
    page = visitor.client.get("/flow/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert "Oder eine digitale ID verwenden" in page and "Digitale ID verwenden" in page
    asked = _ask(visitor)
    data = wallet_present(
        asked["digital"],
        issuer=issuer_create(),
        protocol=PROTOCOL_ANNEX_C,
        origin=_origin(),
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": True},
        now=timezone.now(),
    )
    response = visitor.client.post(
        "/flow/digital-id/response",
        json.dumps({"requestId": asked["requestId"], "protocol": PROTOCOL_ANNEX_C, "data": data}),
        content_type="application/json",
        HTTP_ACCEPT_LANGUAGE="fr",
    )
    assert response.json()["message"].startswith("Nous n'avons pas pu vérifier cette identité numérique.")


def test_an_inconclusive_credential_says_which_limit_it_did_not_show(api, enabled, trusted):
    visitor = open_flow(api, age_limit=21)
    status, body = _answer(visitor, _ask(visitor), trusted)  # age_over_18 only: says nothing about 21
    assert body["status"] == "initiated"
    assert body["message"] == "Your digital ID does not show that you are at least 21. Please use another way below."


def test_an_expired_request_is_refused_and_its_key_does_not_outlive_the_next_request(api, enabled, trusted):
    visitor = open_flow(api)
    asked = _ask(visitor)
    DigitalIdRequest.objects.filter(pk=asked["requestId"]).update(expires_at=timezone.now())
    status, body = _answer(visitor, asked, trusted)
    assert (body["status"], "expired" in body["message"]) == ("initiated", True)
    assert visitor.session.digital_id_attempts == 0  # nothing was verified: no attempt used

    other = open_flow(api)
    _ask(other)
    assert not DigitalIdRequest.objects.filter(pk=asked["requestId"]).exists()
