"""The digital-ID verifier against mdocs minted here with a self-made IACA root and document signer."""

import datetime

import cbor2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from checks.digital_id.refusals import PresentationRefused
from checks.digital_id.request import (
    PROTOCOL_ANNEX_C,
    PROTOCOL_OPENID4VP,
    b64url,
    browser_request,
    wallet_request_dump,
    wallet_request_load,
    wallet_request_new,
)
from checks.digital_id.sandbox_wallet import (
    device_response,
    document_mint,
    issuer_create,
    response_seal,
    wallet_present,
    wallet_transcript,
)
from checks.digital_id.trust import EU_AGE_ATTESTATION, MOBILE_DRIVING_LICENCE
from checks.digital_id.verifier import presentation_verify

ORIGIN = "https://verify.example"
NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.UTC)
BOTH = [PROTOCOL_ANNEX_C, PROTOCOL_OPENID4VP]


@pytest.fixture(scope="module")
def issuer():
    return issuer_create(name="Utopia AV issuer", country="UT")


@pytest.fixture(scope="module")
def live_anchors(issuer):
    return [issuer.anchor(doc_types=[EU_AGE_ATTESTATION], sandbox=False, source="pem:utopia.pem")]


def _request(age_limit=18, doc_types=(EU_AGE_ATTESTATION,)):
    # Through the JSON state the server keeps, as the flow endpoint does.
    return wallet_request_load(
        wallet_request_dump(wallet_request_new(origin=ORIGIN, doc_types=doc_types, age_limit=age_limit))
    )


def _verify(request, protocol, data, anchors, *, live=True):
    return presentation_verify(request=request, protocol=protocol, data=data, anchors=anchors, live=live, now=NOW)


def _refusal(request, protocol, data, anchors, *, live=True) -> str:
    with pytest.raises(PresentationRefused) as refused:
        _verify(request, protocol, data, anchors, live=live)
    return refused.value.code


def _present(request, issuer, protocol, *, elements=None, doc_type=EU_AGE_ATTESTATION, origin=ORIGIN, **kwargs):
    return wallet_present(
        browser_request(request),
        issuer=issuer,
        protocol=protocol,
        origin=origin,
        doc_type=doc_type,
        elements=elements or {"age_over_18": True},
        now=NOW,
        **kwargs,
    )


def _mint(request, issuer, protocol, *, valid_from=None, valid_until=None, tamper=False, origin=ORIGIN):
    """(what the browser was asked, a document minted for it), valid from a day before NOW to a day after."""
    asked = browser_request(request)
    document = document_mint(
        issuer,
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": True},
        device_key=ec.generate_private_key(ec.SECP256R1()),
        transcript=wallet_transcript(asked, protocol=protocol, origin=origin),
        valid_from=NOW - datetime.timedelta(days=1) if valid_from is None else valid_from,
        valid_until=NOW + datetime.timedelta(days=1) if valid_until is None else valid_until,
        tamper=tamper,
    )
    return asked, document


def _sealed(asked, protocol, *documents) -> dict:
    return response_seal(asked, protocol=protocol, origin=ORIGIN, response=device_response(*documents))


@pytest.mark.parametrize("protocol", BOTH)
def test_a_valid_eu_age_attestation_over_18_proves_the_limit(issuer, live_anchors, protocol):
    request = _request()
    credential = _verify(request, protocol, _present(request, issuer, protocol), live_anchors)
    assert (credential.outcome, credential.doc_type, credential.claim, credential.value) == (
        "over",
        EU_AGE_ATTESTATION,
        "age_over_18",
        True,
    )
    assert (credential.age_limit, credential.issuer_country, credential.trust_source) == (18, "UT", "pem:utopia.pem")


@pytest.mark.parametrize("protocol", BOTH)
def test_age_over_18_false_is_underage(issuer, live_anchors, protocol):
    request = _request()
    credential = _verify(
        request, protocol, _present(request, issuer, protocol, elements={"age_over_18": False}), live_anchors
    )
    assert (credential.outcome, credential.claim, credential.value) == ("under", "age_over_18", False)


def test_age_over_18_proves_a_lower_limit_but_not_a_higher_one(issuer, live_anchors):
    lower = _request(age_limit=16)
    assert _verify(lower, PROTOCOL_ANNEX_C, _present(lower, issuer, PROTOCOL_ANNEX_C), live_anchors).outcome == "over"
    higher = _request(age_limit=21)
    credential = _verify(higher, PROTOCOL_ANNEX_C, _present(higher, issuer, PROTOCOL_ANNEX_C), live_anchors)
    assert (credential.outcome, credential.claim, credential.value) == ("inconclusive", None, None)


def test_a_mobile_driving_licence_answers_with_age_over_21(issuer):
    anchors = [issuer.anchor(doc_types=[MOBILE_DRIVING_LICENCE], sandbox=False, source="vical")]
    request = _request(age_limit=21, doc_types=(EU_AGE_ATTESTATION, MOBILE_DRIVING_LICENCE))
    data = _present(
        request,
        issuer,
        PROTOCOL_OPENID4VP,
        doc_type=MOBILE_DRIVING_LICENCE,
        elements={"age_over_18": True, "age_over_21": True},
    )
    credential = _verify(request, PROTOCOL_OPENID4VP, data, anchors)
    assert (credential.outcome, credential.doc_type, credential.claim) == (
        "over",
        MOBILE_DRIVING_LICENCE,
        "age_over_21",
    )


@pytest.mark.parametrize("protocol", BOTH)
def test_an_issuer_no_anchor_vouches_for_is_untrusted(live_anchors, protocol):
    request = _request()
    stranger = issuer_create(name="Utopia AV issuer", country="UT")  # same name, other keys
    assert _refusal(request, protocol, _present(request, stranger, protocol), live_anchors) == "issuer_untrusted"


def test_an_anchor_scoped_to_another_doc_type_does_not_vouch(issuer):
    anchors = [issuer.anchor(doc_types=[MOBILE_DRIVING_LICENCE], sandbox=False, source="vical")]
    request = _request()
    assert (
        _refusal(request, PROTOCOL_ANNEX_C, _present(request, issuer, PROTOCOL_ANNEX_C), anchors) == "issuer_untrusted"
    )


def test_a_sandbox_anchor_never_approves_a_live_session_but_does_a_test_one(issuer):
    anchors = [issuer.anchor(sandbox=True, source="sandbox")]
    request = _request()
    data = _present(request, issuer, PROTOCOL_ANNEX_C)
    assert _refusal(request, PROTOCOL_ANNEX_C, data, anchors, live=True) == "sandbox_issuer_on_live_session"
    assert _verify(request, PROTOCOL_ANNEX_C, data, anchors, live=False).outcome == "over"


def test_a_document_signer_without_the_mdoc_key_usage_is_refused():
    signer_without_eku = issuer_create(signer_eku=False)
    anchors = [signer_without_eku.anchor(sandbox=False, source="pem:x")]
    request = _request()
    data = _present(request, signer_without_eku, PROTOCOL_ANNEX_C)
    assert _refusal(request, PROTOCOL_ANNEX_C, data, anchors) == "issuer_certificate_invalid"


def test_an_expired_issuer_certificate_is_refused():
    old = issuer_create(not_before=NOW - datetime.timedelta(days=400), not_after=NOW - datetime.timedelta(days=1))
    request = _request()
    data = _present(request, old, PROTOCOL_ANNEX_C)
    assert _refusal(request, PROTOCOL_ANNEX_C, data, [old.anchor(sandbox=False, source="pem:x")]) == (
        "issuer_certificate_invalid"
    )


@pytest.mark.parametrize("protocol", BOTH)
def test_an_expired_mso_is_refused(issuer, live_anchors, protocol):
    request = _request()
    asked, document = _mint(
        request,
        issuer,
        protocol,
        valid_from=NOW - datetime.timedelta(days=30),
        valid_until=NOW - datetime.timedelta(hours=1),
    )
    data = _sealed(asked, protocol, document)
    assert _refusal(request, protocol, data, live_anchors) == "mso_expired"


def test_an_mso_not_yet_valid_is_refused(issuer, live_anchors):
    request = _request()
    asked, document = _mint(
        request,
        issuer,
        PROTOCOL_ANNEX_C,
        valid_from=NOW + datetime.timedelta(hours=1),
        valid_until=NOW + datetime.timedelta(days=30),
    )
    data = _sealed(asked, PROTOCOL_ANNEX_C, document)
    assert _refusal(request, PROTOCOL_ANNEX_C, data, live_anchors) == "mso_not_yet_valid"


@pytest.mark.parametrize("protocol", BOTH)
def test_a_tampered_item_is_refused(issuer, live_anchors, protocol):
    request = _request()
    asked, document = _mint(request, issuer, protocol, tamper=True)
    data = _sealed(asked, protocol, document)
    assert _refusal(request, protocol, data, live_anchors) == "item_digest_mismatch"


def test_a_doc_type_the_request_did_not_allow_is_refused(issuer):
    anchors = [issuer.anchor(sandbox=False, source="pem:x")]
    request = _request()
    data = _present(request, issuer, PROTOCOL_ANNEX_C, doc_type=MOBILE_DRIVING_LICENCE)
    assert _refusal(request, PROTOCOL_ANNEX_C, data, anchors) == "doc_type_not_allowed"


@pytest.mark.parametrize("protocol", BOTH)
def test_a_response_replayed_under_another_nonce_is_refused(issuer, live_anchors, protocol):
    first, second = _request(), _request()
    captured = _present(first, issuer, protocol)
    assert _verify(first, protocol, captured, live_anchors).outcome == "over"
    assert _refusal(second, protocol, captured, live_anchors) == "envelope_not_for_this_request"


@pytest.mark.parametrize("protocol", BOTH)
def test_device_authentication_over_another_transcript_is_refused(issuer, live_anchors, protocol):
    # A relay: the wallet signed for a phishing origin; the response is re-sealed to our request.
    request = _request()
    asked, document = _mint(request, issuer, protocol, origin="https://phish.example")
    data = _sealed(asked, protocol, document)
    assert _refusal(request, protocol, data, live_anchors) == "device_signature_invalid"


def test_a_device_signature_from_another_nonce_resealed_to_this_request_is_refused(issuer, live_anchors):
    first, second = _request(), _request()
    _, document = _mint(first, issuer, PROTOCOL_OPENID4VP)
    data = response_seal(
        browser_request(second), protocol=PROTOCOL_OPENID4VP, origin=ORIGIN, response=device_response(document)
    )
    assert _refusal(second, PROTOCOL_OPENID4VP, data, live_anchors) == "device_signature_invalid"


def test_mac_based_device_authentication_is_refused(issuer, live_anchors):
    request = _request()
    asked, document = _mint(request, issuer, PROTOCOL_ANNEX_C)
    document["deviceSigned"]["deviceAuth"] = {"deviceMac": [b"", {}, None, b"\x00" * 32]}
    data = _sealed(asked, PROTOCOL_ANNEX_C, document)
    assert _refusal(request, PROTOCOL_ANNEX_C, data, live_anchors) == "device_mac_unsupported"


def test_two_documents_are_refused(issuer, live_anchors):
    request = _request()
    asked, document = _mint(request, issuer, PROTOCOL_ANNEX_C)
    data = _sealed(asked, PROTOCOL_ANNEX_C, document, document)
    assert _refusal(request, PROTOCOL_ANNEX_C, data, live_anchors) == "document_count"


@pytest.mark.parametrize(
    "data, code",
    [
        ({"response": "not base64!"}, "envelope_malformed"),
        ({"response": b64url(cbor2.dumps(["dcapi", {"enc": b"x"}]))}, "envelope_malformed"),
        ({"response": b64url(b"\x81" * 40 + b"\x00")}, "presentation_too_large"),
        ({"response": "A" * 200_000}, "presentation_too_large"),
        ({"other": "x"}, "envelope_malformed"),
        ("just text", "envelope_malformed"),
    ],
)
def test_malformed_or_oversized_envelopes_are_refused(live_anchors, data, code):
    assert _refusal(_request(), PROTOCOL_ANNEX_C, data, live_anchors) == code


def test_a_protocol_that_was_not_requested_is_refused(issuer, live_anchors):
    request = _request()
    assert _refusal(request, "openid4vp-v1-signed", _present(request, issuer, PROTOCOL_OPENID4VP), live_anchors) == (
        "protocol_not_requested"
    )


def test_the_request_asks_both_protocols_for_the_limit_and_age_over_18_as_an_alternative():
    asked = browser_request(_request(age_limit=16))
    assert [item["protocol"] for item in asked["requests"]] == [PROTOCOL_OPENID4VP, PROTOCOL_ANNEX_C]
    openid = asked["requests"][0]["data"]
    assert openid["response_mode"] == "dc_api.jwt"
    paths = [claim["path"] for claim in openid["dcql_query"]["credentials"][0]["claims"]]
    assert paths == [["eu.europa.ec.av.1", "age_over_16"], ["eu.europa.ec.av.1", "age_over_18"]]
    assert "d" not in openid["client_metadata"]["jwks"]["keys"][0]  # never the private key


@pytest.mark.parametrize(
    "header",
    [
        {"alg": "dir", "enc": "A128GCM"},
        {"alg": "ECDH-ES", "enc": "A128CBC-HS256", "epk": {}},
    ],
)
def test_a_jwe_outside_the_pinned_algorithms_is_refused(live_anchors, header):
    import json

    text = b64url(json.dumps(header).encode()) + "..AAAA.AAAA.AAAA"
    assert _refusal(_request(), PROTOCOL_OPENID4VP, {"response": text}, live_anchors) == "envelope_malformed"


def test_an_issuer_auth_in_its_cose_sign1_tag_is_read_too(issuer, live_anchors):
    request = _request()
    asked, document = _mint(request, issuer, PROTOCOL_ANNEX_C)
    document["issuerSigned"]["issuerAuth"] = cbor2.CBORTag(18, document["issuerSigned"]["issuerAuth"])
    data = _sealed(asked, PROTOCOL_ANNEX_C, document)
    assert _verify(request, PROTOCOL_ANNEX_C, data, live_anchors).outcome == "over"
