"""The cross-device request's two wallet addresses, seen as a wallet sees them (HTTP), without a wallet's libraries.

The whole round trip with independent wallet libraries is in tests/e2e/test_digital_id_phone.py; here
the request object's contents and every refusal that comes before a presentation is verified.
"""

import base64
import datetime
import json
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography import x509
from django.utils.timezone import now as django_now
from joserfc import jws
from joserfc.jwk import ECKey

from checks.digital_id.sandbox_wallet import issuer_create
from checks.digital_id.trust import EU_AGE_ATTESTATION
from sessions_api.models import DigitalIdRequest
from tenants.models import Tenant
from tests.support.flow import open_flow
from tests.support.reader_ca import reader_configure
from wallets.trust_anchors import trust_anchors_replace

FORM = "application/x-www-form-urlencoded"


@pytest.fixture
def offered(onboarded):
    issuer = issuer_create(name="Utopia AV issuer", country="UT")
    trust_anchors_replace(source="pem:utopia", issuers=[(issuer.root, [EU_AGE_ATTESTATION])], sandbox=False)
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True)


@pytest.fixture
def reader_ca(settings, tmp_path):
    return reader_configure(settings, tmp_path)


def _phone(visitor):
    response = visitor.client.post("/flow/digital-id/phone", "{}", content_type="application/json")
    return response.status_code, response.json()


def _paths(link: str) -> tuple[str, str, dict]:
    """(request path, response path, link parameters) of an `openid4vp://` link."""
    assert link.startswith("openid4vp://?")
    params = {name: values[0] for name, values in parse_qs(urlsplit(link).query).items()}
    request_path = urlsplit(params["request_uri"]).path
    return request_path, request_path.replace("/request/", "/response/"), params


def _verified_claims(signed: str, ca) -> tuple[dict, dict]:
    """The request object's header and claims, its signature checked with the x5c leaf the CA issued."""
    header = json.loads(base64.urlsafe_b64decode(signed.split(".")[0] + "=="))
    leaf = x509.load_der_x509_certificate(base64.b64decode(header["x5c"][0]))
    leaf.verify_directly_issued_by(ca.root)
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 8192  # the x5c chain is in the header
    token = jws.deserialize_compact(signed, ECKey.import_key(leaf.public_key()), registry=registry)
    return header, json.loads(token.payload)


def test_the_phone_option_needs_a_reader_certificate_that_can_sign(api, offered):
    visitor = open_flow(api)
    assert _phone(visitor)[0] == 409
    assert 'data-phone-url="' not in visitor.client.get("/flow/").content.decode()


def test_the_request_uri_serves_one_signed_request_object_for_direct_post_jwt(api, offered, reader_ca, settings):
    visitor = open_flow(api, age_limit=18)
    assert 'data-phone-url="/flow/digital-id/phone"' in visitor.client.get("/flow/").content.decode()
    status, shown = _phone(visitor)
    assert status == 200 and shown["qrSvg"].startswith("<svg")
    request_path, response_path, params = _paths(shown["link"])
    host = urlsplit(settings.PUBLIC_BASE_URL).hostname
    assert (params["client_id"], params["request_uri_method"]) == (f"x509_san_dns:{host}", "post")

    fetched = visitor.client.generic("POST", request_path, "wallet_nonce=n-123", content_type=FORM)
    assert (fetched.status_code, fetched["Content-Type"]) == (200, "application/oauth-authz-req+jwt")
    assert fetched["Cache-Control"] == "no-store"
    header, claims = _verified_claims(fetched.content.decode(), reader_ca)
    assert header["typ"] == "oauth-authz-req+jwt"
    assert claims["client_id"] == params["client_id"] and claims["wallet_nonce"] == "n-123"
    assert (claims["response_type"], claims["response_mode"]) == ("vp_token", "direct_post.jwt")
    assert claims["response_uri"] == settings.PUBLIC_BASE_URL.rstrip("/") + response_path
    stored = DigitalIdRequest.objects.get(pk=shown["requestId"]).state
    assert (claims["nonce"], claims["state"]) == (stored["nonce"], stored["state"])  # from server state
    (key,) = claims["client_metadata"]["jwks"]["keys"]
    assert (key["kty"], key["crv"], key["use"]) == ("EC", "P-256", "enc") and "d" not in key
    assert claims["dcql_query"]["credentials"][0]["claims"][0]["path"] == ["eu.europa.ec.av.1", "age_over_18"]

    again = visitor.client.get(request_path)
    assert (again.status_code, again.json()) == (
        400,
        {"error": "invalid_request", "error_description": "request_uri_used"},
    )


@pytest.mark.parametrize(
    ("body", "content_type", "status", "code"),
    [
        ("response=eyJ.a.b.c.d", FORM, 400, "request_not_fetched"),
        ("nothing=here", FORM, 400, "response_body_malformed"),
        ("response=a&response=b", FORM, 400, "response_body_malformed"),
        ('{"response": "x"}', "application/json", 415, "response_body_malformed"),
        ("response=" + "A" * 600_000, FORM, 413, "response_body_malformed"),
    ],
)
def test_an_answer_the_service_cannot_take_is_refused_before_verification(
    api, offered, reader_ca, body, content_type, status, code
):
    visitor = open_flow(api)
    _, response_path, _ = _paths(_phone(visitor)[1]["link"])
    answered = visitor.client.generic("POST", response_path, body, content_type=content_type)
    assert (answered.status_code, answered.json()) == (status, {"error": "invalid_request", "error_description": code})
    session = visitor.session
    assert (session.status, session.digital_id_attempts) == ("initiated", 0)


def test_unknown_request_ids_and_other_methods_are_refused(api, offered, reader_ca):
    unknown = open_flow(api).client.get("/wallet/openid4vp/request/dcr_nothing")
    assert (unknown.status_code, unknown.json()["error_description"]) == (400, "request_uri_unknown")
    visitor = open_flow(api)
    request_path, response_path, _ = _paths(_phone(visitor)[1]["link"])
    assert visitor.client.put(request_path).status_code == 405
    assert visitor.client.get(response_path).status_code == 405


def test_the_browser_answer_endpoint_does_not_consume_a_phones_request(api, offered, reader_ca):
    visitor = open_flow(api)
    shown = _phone(visitor)[1]
    answered = visitor.client.post(
        "/flow/digital-id/response",
        json.dumps({"requestId": shown["requestId"], "protocol": "openid4vp-v1-request-uri", "data": {}}),
        content_type="application/json",
    )
    assert answered.json()["message"] == "This request has expired. Please try again."
    assert DigitalIdRequest.objects.get(pk=shown["requestId"]).consumed_at is None


def test_the_desktop_follows_its_request_until_the_wallet_fetches_it(api, offered, reader_ca):
    visitor = open_flow(api)
    shown = _phone(visitor)[1]
    request_path, _, _ = _paths(shown["link"])

    def progress():
        answer = visitor.client.post(
            "/flow/digital-id/phone/progress", json.dumps({"requestId": shown["requestId"]}), "application/json"
        )
        return answer.json()["state"]

    assert progress() == "waiting"
    visitor.client.get(request_path)
    assert progress() == "fetched"
    # Between the answer's arrival (the request consumed) and the decision, the page keeps waiting.
    DigitalIdRequest.objects.filter(pk=shown["requestId"]).update(
        consumed_at=django_now(), state={"transport": "cross_device", "answered": True}
    )
    assert progress() == "checking"
    assert _phone(visitor)[0] == 200  # a new code replaces the old one
    assert progress() == "gone"


def test_a_reader_certificate_that_expired_since_the_code_was_shown_signs_nothing(
    api, offered, reader_ca, settings, tmp_path
):
    visitor = open_flow(api)
    request_path, _, _ = _paths(_phone(visitor)[1]["link"])
    past = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=1)
    reader_configure(settings, tmp_path, ca=reader_ca, not_before=past - datetime.timedelta(days=30), not_after=past)

    fetched = visitor.client.get(request_path)

    assert (fetched.status_code, fetched.json()) == (
        503,
        {"error": "temporarily_unavailable", "error_description": "reader_certificate_unusable"},
    )
