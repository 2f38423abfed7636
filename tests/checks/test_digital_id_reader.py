"""The operator's reader certificate: what it signs, and what it refuses to sign with."""

import base64
import datetime
import hashlib
import json

import cbor2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from checks.digital_id.reader import (
    REQUEST_OBJECT_TYPE,
    ReaderCertificateRefused,
    chain_order,
    reader_auth_sign,
    reader_csr_create,
    reader_identity_check,
    reader_identity_load,
    request_object_sign,
)
from tests.support.reader_ca import NOW, ReaderCa, key_pem, pem, reader_ca_create, reader_files

CLAIMS = {"response_type": "vp_token", "response_mode": "dc_api.jwt", "nonce": "n-0S6_WzA2Mj"}


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _raw_verify(public_key, signature: bytes, message: bytes) -> None:
    r, s = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big")
    public_key.verify(encode_dss_signature(r, s), message, ec.ECDSA(hashes.SHA256()))


@pytest.fixture(scope="module")
def ca():
    return reader_ca_create()


@pytest.fixture(scope="module")
def identity(ca):
    key, chain = reader_files(ca)
    return reader_identity_load(key_pem=key, chain_pem=chain)


def test_request_object_carries_the_chain_and_verifies_under_the_leaf(identity, ca):
    token = request_object_sign(CLAIMS, identity=identity, client_id="x509_san_dns:verify.example", now=NOW)
    header_b64, payload_b64, signature_b64 = token.split(".")
    header, payload = json.loads(_unb64(header_b64)), json.loads(_unb64(payload_b64))
    assert header["alg"] == "ES256" and header["typ"] == REQUEST_OBJECT_TYPE
    chain = [x509.load_der_x509_certificate(base64.b64decode(der)) for der in header["x5c"]]
    assert chain == [identity.leaf]  # the trust anchor stays out: the wallet has its own copy
    _raw_verify(chain[0].public_key(), _unb64(signature_b64), f"{header_b64}.{payload_b64}".encode())
    assert payload == {**CLAIMS, "client_id": "x509_san_dns:verify.example", "iat": int(NOW.timestamp())}


def test_x509_hash_client_id_is_the_leaf_der_digest(identity):
    digest = base64.urlsafe_b64encode(hashlib.sha256(identity.chain_der()[0]).digest()).rstrip(b"=").decode()
    assert identity.client_id("x509_hash") == f"x509_hash:{digest}"
    token = request_object_sign(CLAIMS, identity=identity, client_id=f"x509_hash:{digest}", now=NOW)
    assert json.loads(_unb64(token.split(".")[1]))["client_id"] == f"x509_hash:{digest}"


@pytest.mark.parametrize("client_id", ["x509_san_dns:other.example", "x509_hash:AAAA", "redirect_uri:https://x"])
def test_a_client_id_the_leaf_does_not_stand_for_is_refused(identity, client_id):
    with pytest.raises(ReaderCertificateRefused) as refused:
        request_object_sign(CLAIMS, identity=identity, client_id=client_id, now=NOW)
    assert refused.value.code == ReaderCertificateRefused.CLIENT_ID_MISMATCH


def test_reader_auth_signs_the_reader_authentication_with_x5chain_unprotected(identity):
    transcript = [None, None, ["dcapi", b"\x01" * 32]]
    items = cbor2.dumps({"docType": "eu.europa.ec.av.1", "nameSpaces": {"eu.europa.ec.av.1": {"age_over_18": False}}})
    protected, unprotected, payload, signature = reader_auth_sign(
        identity=identity, session_transcript=transcript, items_request_bytes=items, now=NOW
    )
    assert cbor2.loads(protected) == {1: -7} and payload is None
    assert unprotected[33] == identity.leaf.public_bytes(serialization.Encoding.DER)  # one: a bstr, no root
    authentication = cbor2.dumps(
        cbor2.CBORTag(24, cbor2.dumps(["ReaderAuthentication", transcript, cbor2.CBORTag(24, items)]))
    )
    _raw_verify(identity.leaf.public_key(), signature, cbor2.dumps(["Signature1", protected, b"", authentication]))


def test_key_that_is_not_the_leaf_is_refused(ca):
    _, chain = reader_files(ca)
    other_key, _ = reader_files(ca)
    identity = reader_identity_load(key_pem=other_key, chain_pem=chain)
    with pytest.raises(ReaderCertificateRefused) as refused:
        request_object_sign(CLAIMS, identity=identity, client_id=identity.client_id(), now=NOW)
    assert refused.value.code == ReaderCertificateRefused.KEY_MISMATCH


def test_chain_whose_root_did_not_issue_the_leaf_is_refused(ca):
    key, chain = reader_files(ca)
    leaf = x509.load_pem_x509_certificates(chain)[0]
    identity = reader_identity_load(key_pem=key, chain_pem=pem(leaf, reader_ca_create().root))
    with pytest.raises(ReaderCertificateRefused) as refused:
        reader_identity_check(identity, now=NOW)
    assert refused.value.code == ReaderCertificateRefused.CHAIN_BROKEN


def test_a_chain_through_a_certificate_that_is_not_a_ca_is_refused(ca):
    # A leaf of the CA signs the reader's certificate: each signature holds, the middle one has no CA role.
    middle_key = ec.generate_private_key(ec.SECP256R1())
    middle = ca.issue(reader_csr_create(middle_key, dns_name="x.example", organization="O", country="UT"))
    reader_key = ec.generate_private_key(ec.SECP256R1())
    csr = reader_csr_create(reader_key, dns_name="verify.example", organization="O", country="UT")
    leaf = ReaderCa(middle_key, middle).issue(csr)
    identity = reader_identity_load(key_pem=key_pem(reader_key), chain_pem=pem(leaf, middle, ca.root))
    with pytest.raises(ReaderCertificateRefused) as refused:
        reader_identity_check(identity, now=NOW)
    assert refused.value.code == ReaderCertificateRefused.CHAIN_BROKEN and "not a CA" in refused.value.detail


@pytest.mark.parametrize(
    "validity, code",
    [
        ({"not_after": NOW - datetime.timedelta(seconds=1)}, ReaderCertificateRefused.EXPIRED),
        ({"not_before": NOW + datetime.timedelta(days=1)}, ReaderCertificateRefused.NOT_YET_VALID),
    ],
)
def test_a_certificate_out_of_its_validity_signs_nothing(ca, validity, code):
    key, chain = reader_files(ca, **validity)
    identity = reader_identity_load(key_pem=key, chain_pem=chain)
    with pytest.raises(ReaderCertificateRefused) as refused:
        request_object_sign(CLAIMS, identity=identity, client_id=identity.client_id(), now=NOW)
    assert refused.value.code == code
    with pytest.raises(ReaderCertificateRefused):
        reader_auth_sign(identity=identity, session_transcript=[], items_request_bytes=b"\xa0", now=NOW)


@pytest.mark.parametrize("key, chain", [(b"not a key", None), (None, b"not a chain")])
def test_unreadable_files_are_refused_by_name(ca, key, chain):
    good_key, good_chain = reader_files(ca)
    with pytest.raises(ReaderCertificateRefused) as refused:
        reader_identity_load(key_pem=key or good_key, chain_pem=chain or good_chain)
    assert refused.value.code == ReaderCertificateRefused.UNREADABLE


def test_an_issued_bundle_in_any_order_is_put_leaf_first(ca):
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = ca.issue(reader_csr_create(key, dns_name="verify.example", organization="O", country="UT"))
    assert chain_order([ca.root, leaf], key) == [leaf, ca.root]
    with pytest.raises(ReaderCertificateRefused):
        chain_order([ca.root], key)
    assert reader_identity_load(key_pem=key_pem(key), chain_pem=pem(leaf)).chain == (leaf,)
