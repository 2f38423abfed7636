"""Signed wallet requests as a wallet's own libraries (npm, not ours, run by node) judge them.

@openid4vc/openid4vp resolves the signed OpenID4VP request object, @animo-id/mdoc decodes the Annex C
DeviceRequest, pkijs validates the chain against the reader CA root the wallet trusts
(tests/support/wallet_node/check_request.mjs).
"""

import json

import cbor2
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from joserfc import jws
from joserfc.jwk import ECKey

from checks.digital_id.reader import reader_identity_load
from checks.digital_id.refusals import PresentationRefused
from checks.digital_id.request import (
    PROTOCOL_ANNEX_C,
    PROTOCOL_OPENID4VP,
    b64url,
    b64url_decode,
    browser_request,
    wallet_request_new,
)
from checks.digital_id.sandbox_wallet import issuer_create, wallet_present
from checks.digital_id.signed_request import PROTOCOL_OPENID4VP_SIGNED, browser_request_signed
from checks.digital_id.trust import EU_AGE_ATTESTATION
from checks.digital_id.verifier import presentation_verify
from tests.support.reader_ca import NOW, reader_ca_create, reader_files
from tests.support.wallet_libraries import wallet_check_request

ORIGIN = "https://verify.example"


@pytest.fixture(scope="module")
def ca():
    return reader_ca_create()


@pytest.fixture(scope="module")
def identity(ca):
    key, chain = reader_files(ca, dns_name="verify.example")
    return reader_identity_load(key_pem=key, chain_pem=chain)


def _request():
    return wallet_request_new(origin=ORIGIN, doc_types=(EU_AGE_ATTESTATION,), age_limit=18)


def _signed(identity, request=None, *, scheme="x509_san_dns", **options):
    return browser_request_signed(
        request or _request(), identity=identity, client_id=identity.client_id(scheme), now=NOW, **options
    )


@pytest.mark.parametrize("scheme", ["x509_san_dns", "x509_hash"])
def test_the_wallet_verifies_both_signed_variants_against_the_reader_root(ca, identity, scheme):
    request = _request()
    seen = wallet_check_request(_signed(identity, request, scheme=scheme), origin=ORIGIN, roots=[ca.root_pem()])
    [openid4vp] = seen[PROTOCOL_OPENID4VP_SIGNED]
    assert openid4vp["verified"], openid4vp
    assert openid4vp["clientId"] == identity.client_id(scheme) and openid4vp["typ"] == "oauth-authz-req+jwt"
    assert openid4vp["payload"]["nonce"] == request.nonce_text
    assert openid4vp["payload"]["expected_origins"] == [ORIGIN]
    [annex_c] = seen[PROTOCOL_ANNEX_C]
    assert annex_c["verified"], annex_c
    assert annex_c["docRequests"] == [{"docType": EU_AGE_ATTESTATION, "readerDnsNames": ["verify.example"]}]


def test_a_chain_through_an_issuing_ca_is_sent_without_the_root_and_verifies(ca):
    issuing = ca.subordinate()
    key, chain = reader_files(issuing, dns_name="verify.example")
    identity = reader_identity_load(key_pem=key, chain_pem=chain + ca.root_pem())  # leaf, issuing CA, root
    digital = _signed(identity)
    header = json.loads(b64url_decode(digital["requests"][0]["data"]["request"].split(".")[0]))
    assert len(header["x5c"]) == 2  # leaf and issuing CA: the root is the wallet's own
    seen = wallet_check_request(digital, origin=ORIGIN, roots=[ca.root_pem()])
    assert [outcome["verified"] for outcomes in seen.values() for outcome in outcomes] == [True, True], seen


def test_a_wallet_that_does_not_trust_the_reader_ca_refuses_both(identity):
    seen = wallet_check_request(_signed(identity), origin=ORIGIN, roots=[reader_ca_create().root_pem()])
    errors = [outcome.get("error", "") for outcomes in seen.values() for outcome in outcomes]
    assert len(errors) == 2 and all("x509 chain does not verify" in error for error in errors)


def test_on_another_page_the_wallet_refuses_both(ca, identity):
    seen = wallet_check_request(_signed(identity), origin="https://evil.example", roots=[ca.root_pem()])
    [openid4vp], [annex_c] = seen[PROTOCOL_OPENID4VP_SIGNED], seen[PROTOCOL_ANNEX_C]
    assert not openid4vp["verified"] and "expected_origins" in openid4vp["error"]
    assert not annex_c["verified"] and "signature does not verify" in annex_c["error"]


def test_a_request_signed_by_another_key_is_refused(ca, identity):
    """The operator's chain in the headers, the signatures made by a key that is not the leaf's."""
    digital = _signed(identity)
    other = ec.generate_private_key(ec.SECP256R1())
    for item in digital["requests"]:
        if item["protocol"] == PROTOCOL_OPENID4VP_SIGNED:
            header_b64, payload_b64, _ = item["data"]["request"].split(".")
            header, payload = json.loads(b64url_decode(header_b64)), b64url_decode(payload_b64)
            item["data"]["request"] = jws.serialize_compact(header, payload, ECKey.import_key(other))
        else:
            device_request = cbor2.loads(b64url_decode(item["data"]["deviceRequest"]))
            for doc_request in device_request["docRequests"]:
                doc_request["readerAuth"][3] = bytes(64)  # no valid signature of anyone's
            item["data"]["deviceRequest"] = b64url(cbor2.dumps(device_request))
    seen = wallet_check_request(digital, origin=ORIGIN, roots=[ca.root_pem()])
    [openid4vp], [annex_c] = seen[PROTOCOL_OPENID4VP_SIGNED], seen[PROTOCOL_ANNEX_C]
    assert not openid4vp["verified"] and openid4vp["error"] == "Error during verification of jwt."
    assert not annex_c["verified"] and annex_c["error"] == "readerAuth signature does not verify"


def test_a_signed_only_wallet_refuses_the_unsigned_request(ca):
    seen = wallet_check_request(browser_request(_request()), origin=ORIGIN, roots=[ca.root_pem()])
    [openid4vp], [annex_c] = seen[PROTOCOL_OPENID4VP], seen[PROTOCOL_ANNEX_C]
    assert not openid4vp["verified"] and "not a signed request object" in openid4vp["error"]
    assert not annex_c["verified"] and "no readerAuth" in annex_c["error"]


def test_unsigned_variant_only_when_asked(identity):
    assert [item["protocol"] for item in _signed(identity)["requests"]] == [PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_ANNEX_C]
    assert PROTOCOL_OPENID4VP in [item["protocol"] for item in _signed(identity, unsigned_too=True)["requests"]]


@pytest.mark.parametrize("protocol", [PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_ANNEX_C])
def test_the_answer_to_a_signed_request_is_verified_as_before(identity, protocol):
    request = _request()
    issuer = issuer_create(name="Utopia AV issuer", country="UT")
    data = wallet_present(
        _signed(identity, request),
        issuer=issuer,
        protocol=protocol,
        origin=ORIGIN,
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": True},
        now=NOW,
    )
    anchors = [issuer.anchor(doc_types=[EU_AGE_ATTESTATION], sandbox=False, source="pem:utopia.pem")]
    offered = (PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_ANNEX_C)
    credential = presentation_verify(
        request=request, protocol=protocol, data=data, anchors=anchors, live=True, now=NOW, offered=offered
    )
    assert (credential.outcome, credential.claim) == ("over", "age_over_18")


def test_an_answer_under_a_protocol_not_offered_is_refused(identity):
    request = _request()
    issuer = issuer_create(name="Utopia AV issuer", country="UT")
    data = wallet_present(
        _signed(identity, request, unsigned_too=True),
        issuer=issuer,
        protocol=PROTOCOL_OPENID4VP,
        origin=ORIGIN,
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": True},
        now=NOW,
    )
    anchors = [issuer.anchor(doc_types=[EU_AGE_ATTESTATION], sandbox=False, source="pem:utopia.pem")]
    with pytest.raises(PresentationRefused) as refused:
        presentation_verify(
            request=request,
            protocol=PROTOCOL_OPENID4VP,
            data=data,
            anchors=anchors,
            live=True,
            now=NOW,
            offered=(PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_ANNEX_C),
        )
    assert refused.value.code == "protocol_not_requested"
