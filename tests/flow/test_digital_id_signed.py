"""The digital-ID step with the operator's reader certificate: what the page hands the wallet; who may go unsigned."""

import datetime
import json
from urllib.parse import urlsplit

import cbor2
import pytest
from django.conf import settings
from django.utils import timezone

from checks.digital_id.request import PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP, b64url_decode
from checks.digital_id.sandbox_wallet import issuer_create, wallet_present
from checks.digital_id.signed_request import PROTOCOL_OPENID4VP_SIGNED
from checks.digital_id.trust import EU_AGE_ATTESTATION
from tenants.models import Tenant
from tests.support.flow import open_flow
from tests.support.reader_ca import reader_configure
from tests.support.wallet_libraries import wallet_check_request
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
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True)


@pytest.fixture
def reader_ca(settings, tmp_path):
    return reader_configure(settings, tmp_path)


def _origin():
    parts = urlsplit(settings.PUBLIC_BASE_URL)
    return f"{parts.scheme}://{parts.netloc}"


def _post(visitor, path, body):
    response = visitor.client.post(path, json.dumps(body), content_type="application/json")
    return response.status_code, response.json()


def _answer(visitor, asked, issuer, *, protocol):
    data = wallet_present(
        asked["digital"],
        issuer=issuer,
        protocol=protocol,
        origin=_origin(),
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": True},
        now=timezone.now(),
    )
    return _post(
        visitor, "/flow/digital-id/response", {"requestId": asked["requestId"], "protocol": protocol, "data": data}
    )


def test_the_page_hands_the_wallet_requests_it_verifies_against_the_operator_chain(api, enabled, trusted, reader_ca):
    visitor = open_flow(api)
    status, asked = _post(visitor, "/flow/digital-id/request", {})
    assert status == 200, asked
    protocols = [item["protocol"] for item in asked["digital"]["requests"]]
    assert protocols == [PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_ANNEX_C]  # nothing unsigned

    seen = wallet_check_request(asked["digital"], origin=_origin(), roots=[reader_ca.root_pem()])
    [openid4vp], [annex_c] = seen[PROTOCOL_OPENID4VP_SIGNED], seen[PROTOCOL_ANNEX_C]
    host = urlsplit(settings.PUBLIC_BASE_URL).hostname
    assert openid4vp["verified"] and openid4vp["clientId"] == f"x509_san_dns:{host}", openid4vp
    assert openid4vp["payload"]["expected_origins"] == [_origin()]
    assert annex_c["verified"], annex_c


@pytest.mark.parametrize("protocol", [PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_ANNEX_C])
def test_the_answer_to_a_signed_request_approves(api, enabled, trusted, reader_ca, protocol):
    visitor = open_flow(api)
    _, asked = _post(visitor, "/flow/digital-id/request", {})
    status, body = _answer(visitor, asked, trusted, protocol=protocol)
    assert (status, body["status"]) == (200, "approved")
    read = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (read["session"]["reason"], read["ageCredential"]["claim"]) == ("digital_id", "age_over_18")


def test_an_unsigned_answer_to_a_signed_only_request_proves_nothing(api, enabled, trusted, reader_ca, onboarded):
    visitor = open_flow(api)
    _, asked = _post(visitor, "/flow/digital-id/request", {})
    # A wallet answering as if it had been sent the unsigned variant: the service never asked for it.
    asked["digital"]["requests"].append({"protocol": PROTOCOL_OPENID4VP, "data": _unsigned_data(asked["digital"])})
    status, body = _answer(visitor, asked, trusted, protocol=PROTOCOL_OPENID4VP)
    assert (status, body["status"]) == (200, "initiated")
    assert body["message"].startswith("We could not verify this digital ID")


def _unsigned_data(digital):
    jar = next(item for item in digital["requests"] if item["protocol"] == PROTOCOL_OPENID4VP_SIGNED)["data"]["request"]
    return json.loads(b64url_decode(jar.split(".")[1]))


def test_without_a_reader_certificate_the_digital_id_is_not_offered(api, enabled, trusted, settings):
    settings.DIGITAL_ID_READER_KEY_FILE = ""
    visitor = open_flow(api)
    status, body = _post(visitor, "/flow/digital-id/request", {})
    assert (status, body["error"]) == (409, "unavailable")


def test_with_an_expired_reader_certificate_the_digital_id_is_not_offered(api, enabled, trusted, settings, tmp_path):
    reader_configure(settings, tmp_path, not_after=timezone.now() - datetime.timedelta(minutes=1))
    visitor = open_flow(api)
    status, body = _post(visitor, "/flow/digital-id/request", {})
    assert (status, body["error"]) == (409, "unavailable")


def test_a_tenant_testing_unsigned_gets_the_unsigned_variant_beside_the_signed(api, onboarded, trusted, reader_ca):
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True, digital_id_unsigned_requests=True)
    visitor = open_flow(api)
    _, asked = _post(visitor, "/flow/digital-id/request", {})
    protocols = [item["protocol"] for item in asked["digital"]["requests"]]
    assert protocols == [PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_OPENID4VP, PROTOCOL_ANNEX_C]
    status, body = _answer(visitor, asked, trusted, protocol=PROTOCOL_OPENID4VP)
    assert (status, body["status"]) == (200, "approved")


def test_a_tenant_testing_unsigned_without_a_reader_certificate_gets_unsigned_only(api, onboarded, trusted, settings):
    settings.DIGITAL_ID_READER_KEY_FILE = ""
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True, digital_id_unsigned_requests=True)
    visitor = open_flow(api)
    _, asked = _post(visitor, "/flow/digital-id/request", {})
    assert [item["protocol"] for item in asked["digital"]["requests"]] == [PROTOCOL_OPENID4VP, PROTOCOL_ANNEX_C]
    annex_c = asked["digital"]["requests"][1]["data"]
    doc_requests = cbor2.loads(b64url_decode(annex_c["deviceRequest"]))["docRequests"]
    assert doc_requests and all(set(doc_request) == {"itemsRequest"} for doc_request in doc_requests)


def test_an_answer_to_a_request_signed_before_the_certificate_expired_still_counts(
    api, enabled, trusted, reader_ca, settings, tmp_path
):
    visitor = open_flow(api)
    _, asked = _post(visitor, "/flow/digital-id/request", {})
    (tmp_path / "expired").mkdir()
    reader_configure(settings, tmp_path / "expired", not_after=timezone.now() - datetime.timedelta(minutes=1))
    status, body = _answer(visitor, asked, trusted, protocol=PROTOCOL_OPENID4VP_SIGNED)
    assert (status, body["status"]) == (200, "approved")
    assert _post(open_flow(api), "/flow/digital-id/request", {})[0] == 409  # but no new request is signed
