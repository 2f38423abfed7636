"""The cross-device request's core: its protocol only for its own request, its state, its handover transcript.

A real wallet's answer end to end is in tests/e2e/test_digital_id_phone.py (npm libraries); here the
device response is minted by the test issuer over a transcript the test computes from the OpenID4VP
1.0 text (B.2.6.1), not from the service's transcript code.
"""

import datetime
import hashlib
import json

import cbor2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jwe
from joserfc.jwk import ECKey

from checks.digital_id.cross_device import request_object_claims, wallet_link
from checks.digital_id.refusals import PresentationRefused, Refusal
from checks.digital_id.request import PROTOCOL_OPENID4VP, PROTOCOL_OPENID4VP_CROSS_DEVICE, b64url, wallet_request_new
from checks.digital_id.sandbox_wallet import device_response, document_mint, issuer_create
from checks.digital_id.trust import EU_AGE_ATTESTATION
from checks.digital_id.verifier import presentation_verify

NOW = datetime.datetime.now(datetime.UTC)
CLIENT_ID = "x509_san_dns:verify.example"
RESPONSE_URI = "https://verify.example/wallet/openid4vp/response/dcr_1"


@pytest.fixture(scope="module")
def issuer():
    return issuer_create(name="Utopia AV issuer", country="UT")


def _request():
    return wallet_request_new(
        origin="https://verify.example",
        doc_types=(EU_AGE_ATTESTATION,),
        age_limit=18,
        client_id=CLIENT_ID,
        response_uri=RESPONSE_URI,
    )


def _spec_transcript(claims: dict) -> list:
    """OpenID4VP 1.0 B.2.6.1, as a wallet reads it from the request object it fetched."""
    jwk = claims["client_metadata"]["jwks"]["keys"][0]
    canonical = json.dumps({name: jwk[name] for name in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    thumbprint = hashlib.sha256(canonical.encode()).digest()
    info = cbor2.dumps([claims["client_id"], claims["nonce"], thumbprint, claims["response_uri"]])
    return [None, None, ["OpenID4VPHandover", hashlib.sha256(info).digest()]]


def _answer(issuer, claims: dict, *, state: str | None, over: bool = True) -> dict:
    document = document_mint(
        issuer,
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": over},
        device_key=ec.generate_private_key(ec.SECP256R1()),
        transcript=_spec_transcript(claims),
        valid_from=NOW - datetime.timedelta(days=1),
        valid_until=NOW + datetime.timedelta(days=30),
    )
    payload = {"vp_token": {"age0": [b64url(device_response(document))]}}
    if state is not None:
        payload["state"] = state
    jwk = claims["client_metadata"]["jwks"]["keys"][0]
    header = {"alg": "ECDH-ES", "enc": "A128GCM", "kid": jwk["kid"]}
    return {"response": jwe.encrypt_compact(header, json.dumps(payload), ECKey.import_key(jwk))}


def _verify(issuer, request, protocol, data):
    anchors = [issuer.anchor(doc_types=[EU_AGE_ATTESTATION], sandbox=False, source="pem:utopia")]
    return presentation_verify(request=request, protocol=protocol, data=data, anchors=anchors, live=True, now=NOW)


def test_an_answer_over_the_openid4vp_handover_with_the_requests_state_is_verified(issuer):
    request = _request()
    claims = {**request_object_claims(request, now=NOW, wallet_nonce=None), "client_id": CLIENT_ID}
    credential = _verify(issuer, request, PROTOCOL_OPENID4VP_CROSS_DEVICE, _answer(issuer, claims, state=request.state))
    assert (credential.outcome, credential.claim, credential.value) == ("over", "age_over_18", True)


@pytest.mark.parametrize("state", [None, "another-state"])
def test_an_answer_without_the_requests_state_is_not_for_this_request(issuer, state):
    request = _request()
    claims = {**request_object_claims(request, now=NOW, wallet_nonce=None), "client_id": CLIENT_ID}
    with pytest.raises(PresentationRefused) as refused:
        _verify(issuer, request, PROTOCOL_OPENID4VP_CROSS_DEVICE, _answer(issuer, claims, state=state))
    assert refused.value.code == Refusal.NOT_FOR_THIS_REQUEST


def test_a_device_signature_over_another_response_uri_is_refused(issuer):
    request = _request()
    claims = {**request_object_claims(request, now=NOW, wallet_nonce=None), "client_id": CLIENT_ID}
    relayed = _answer(issuer, {**claims, "response_uri": "https://phish.example/wallet"}, state=request.state)
    with pytest.raises(PresentationRefused) as refused:
        _verify(issuer, request, PROTOCOL_OPENID4VP_CROSS_DEVICE, relayed)
    assert refused.value.code == Refusal.DEVICE_SIGNATURE_INVALID


def test_each_request_is_answered_only_under_its_own_protocol(issuer):
    phone, browser = (
        _request(),
        wallet_request_new(origin="https://verify.example", doc_types=(EU_AGE_ATTESTATION,), age_limit=18),
    )
    for request, protocol in ((phone, PROTOCOL_OPENID4VP), (browser, PROTOCOL_OPENID4VP_CROSS_DEVICE)):
        with pytest.raises(PresentationRefused) as refused:
            _verify(issuer, request, protocol, {"response": "x"})
        assert refused.value.code == Refusal.PROTOCOL_NOT_REQUESTED


def test_the_request_object_and_link_say_what_openid4vp_asks_for():
    request = _request()
    claims = request_object_claims(request, now=NOW, wallet_nonce="w-1")
    assert (claims["response_mode"], claims["response_uri"], claims["wallet_nonce"]) == (
        "direct_post.jwt",
        RESPONSE_URI,
        "w-1",
    )
    assert claims["nonce"] == request.nonce_text and claims["state"] == request.state and len(request.state) >= 32
    assert claims["exp"] == int(NOW.timestamp()) + 300
    link = wallet_link(client_id=CLIENT_ID, request_uri="https://verify.example/wallet/openid4vp/request/dcr_1")
    assert link == (
        "openid4vp://?client_id=x509_san_dns%3Averify.example"
        "&request_uri=https%3A%2F%2Fverify.example%2Fwallet%2Fopenid4vp%2Frequest%2Fdcr_1&request_uri_method=post"
    )
