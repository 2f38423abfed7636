"""`manage.py trust_anchors`: PEM anchors scoped per doc type, and a VICAL believed only when its signature verifies."""

import datetime
from io import StringIO

import cbor2
import pytest
from cryptography.hazmat.primitives import serialization
from django.core.management import CommandError, call_command

from checks.digital_id.sandbox_wallet import cose_sign1_create, issuer_create
from checks.digital_id.trust import EU_AGE_ATTESTATION, MOBILE_DRIVING_LICENCE
from sessions_api.models import TrustAnchorRecord
from wallets.trust_anchors import trust_anchors_for, trusted_doc_types

pytestmark = pytest.mark.django_db


def _run(*args) -> str:
    out = StringIO()
    call_command("trust_anchors", *args, stdout=out)
    return out.getvalue()


def _pem(tmp_path, name, *certificates):
    path = tmp_path / name
    path.write_bytes(b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certificates))
    return str(path)


def _vical(provider, issuers, *, provider_name="AAMVA test"):
    infos = [
        {
            "certificate": i.root.public_bytes(serialization.Encoding.DER),
            "serialNumber": 1,
            "docType": [MOBILE_DRIVING_LICENCE],
            "issuingCountry": "US",
        }
        for i in issuers
    ]
    payload = cbor2.dumps(
        {
            "version": "1.0",
            "vicalProvider": provider_name,
            "date": datetime.datetime(2026, 11, 1, tzinfo=datetime.UTC),
            "certificateInfos": infos,
        }
    )
    signed = cose_sign1_create(
        provider.signer_key, payload, unprotected={33: provider.signer.public_bytes(serialization.Encoding.DER)}
    )
    return cbor2.dumps(cbor2.CBORTag(18, signed))


def test_a_pem_anchor_is_scoped_to_its_doc_types_and_live(tmp_path):
    issuer = issuer_create(country="FR")
    out = _run("add-pem", _pem(tmp_path, "fr.pem", issuer.root), "--source", "fr-av", "--doc-type", EU_AGE_ATTESTATION)
    assert "pem:fr-av: 1 anchor(s) for eu.europa.ec.av.1" in out
    assert trusted_doc_types(live=True) == (EU_AGE_ATTESTATION,)
    (anchor,) = [a for a in trust_anchors_for(live=True) if a.source == "pem:fr-av"]
    assert (anchor.doc_types, anchor.sandbox, anchor.country) == (frozenset({EU_AGE_ATTESTATION}), False, "FR")
    assert "pem:fr-av\tlive\teu.europa.ec.av.1" in _run("list")


def test_a_sandbox_pem_anchor_does_not_make_a_doc_type_available_live(tmp_path):
    _run(
        "add-pem",
        _pem(tmp_path, "t.pem", issuer_create().root),
        "--source",
        "t",
        "--doc-type",
        EU_AGE_ATTESTATION,
        "--sandbox",
    )
    assert trusted_doc_types(live=True) == ()


def test_loading_a_source_again_replaces_it_and_remove_drops_it(tmp_path):
    first, second = issuer_create(), issuer_create()
    _run("add-pem", _pem(tmp_path, "a.pem", first.root, second.root), "--source", "x", "--doc-type", EU_AGE_ATTESTATION)
    assert TrustAnchorRecord.objects.filter(source="pem:x").count() == 2
    _run("add-pem", _pem(tmp_path, "b.pem", second.root), "--source", "x", "--doc-type", EU_AGE_ATTESTATION)
    assert TrustAnchorRecord.objects.filter(source="pem:x").count() == 1
    assert "1 anchor(s) removed" in _run("remove", "--source", "pem:x")


def test_a_file_without_certificates_is_an_error(tmp_path):
    path = tmp_path / "empty.pem"
    path.write_text("nothing here")
    with pytest.raises(CommandError, match="no PEM certificate"):
        _run("add-pem", str(path), "--source", "x", "--doc-type", EU_AGE_ATTESTATION)


def test_a_signed_vical_loads_the_issuers_it_lists_for_mdl(tmp_path):
    provider, listed = issuer_create(name="VICAL provider"), [issuer_create(country="US"), issuer_create(country="US")]
    path = tmp_path / "vical.cbor"
    path.write_bytes(_vical(provider, listed))
    out = _run("load-vical", str(path), "--provider-root", _pem(tmp_path, "p.pem", provider.root))
    assert "vical:vical: signature verified (AAMVA test); 2 anchor(s) loaded" in out
    assert trusted_doc_types(live=True) == (MOBILE_DRIVING_LICENCE,)

    path.write_bytes(_vical(provider, listed[:1]))  # the refresh drops an issuer the list no longer names
    _run("load-vical", str(path), "--provider-root", _pem(tmp_path, "p.pem", provider.root))
    assert TrustAnchorRecord.objects.filter(source="vical:vical").count() == 1


def test_a_tampered_vical_is_rejected_and_changes_nothing(tmp_path):
    provider = issuer_create(name="VICAL provider")
    _run(
        "add-pem",
        _pem(tmp_path, "keep.pem", issuer_create().root),
        "--source",
        "keep",
        "--doc-type",
        MOBILE_DRIVING_LICENCE,
    )
    signed = list(cbor2.loads(_vical(provider, [issuer_create()])).value)
    signed[2] = signed[2].replace(b"AAMVA test", b"AAMVA best")
    path = tmp_path / "vical.cbor"
    path.write_bytes(cbor2.dumps([signed[0], dict(signed[1]), *signed[2:]]))
    with pytest.raises(CommandError, match="signature does not verify"):
        _run("load-vical", str(path), "--provider-root", _pem(tmp_path, "p.pem", provider.root))
    assert list(TrustAnchorRecord.objects.values_list("source", flat=True)) == ["pem:keep"]


def test_a_vical_signed_by_someone_else_is_rejected(tmp_path):
    provider, impostor = issuer_create(name="VICAL provider"), issuer_create(name="VICAL provider")
    path = tmp_path / "vical.cbor"
    path.write_bytes(_vical(impostor, [issuer_create()]))
    with pytest.raises(CommandError, match="not issued by a configured provider root"):
        _run("load-vical", str(path), "--provider-root", _pem(tmp_path, "p.pem", provider.root))
    assert not TrustAnchorRecord.objects.exists()


def _etsi_list(operator, providers, *, next_update="2030-01-01T00:00:00Z", status=None):
    """An ETSI TS 119 612 list naming `providers`' roots as granted services, XML-signed by `operator`."""
    import base64

    from lxml import etree
    from signxml import XMLSigner

    from checks.digital_id.trusted_list import TSL_GRANTED, TSL_NAMESPACE

    tag = f"{{{TSL_NAMESPACE}}}"
    root = etree.Element(tag + "TrustServiceStatusList", nsmap={None: TSL_NAMESPACE}, Id="tsl")
    scheme = etree.SubElement(root, tag + "SchemeInformation")
    etree.SubElement(etree.SubElement(scheme, tag + "SchemeOperatorName"), tag + "Name").text = "EU AV scheme"
    etree.SubElement(etree.SubElement(scheme, tag + "NextUpdate"), tag + "dateTime").text = next_update
    services = etree.SubElement(
        etree.SubElement(etree.SubElement(root, tag + "TrustServiceProviderList"), tag + "TrustServiceProvider"),
        tag + "TSPServices",
    )
    for provider in providers:
        information = etree.SubElement(etree.SubElement(services, tag + "TSPService"), tag + "ServiceInformation")
        etree.SubElement(information, tag + "ServiceStatus").text = status or TSL_GRANTED
        identity = etree.SubElement(etree.SubElement(information, tag + "ServiceDigitalIdentity"), tag + "DigitalId")
        etree.SubElement(identity, tag + "X509Certificate").text = base64.b64encode(
            provider.root.public_bytes(serialization.Encoding.DER)
        ).decode()
    signed = XMLSigner(signature_algorithm="ecdsa-sha256").sign(root, key=operator.root_key, cert=[operator.root])
    return etree.tostring(signed)


def test_a_signed_etsi_list_loads_its_granted_providers_for_the_eu_age_attestation(tmp_path):
    operator, providers = issuer_create(name="Scheme operator"), [issuer_create(country="FR"), issuer_create()]
    path = tmp_path / "eu-av.xml"
    path.write_bytes(_etsi_list(operator, providers))
    out = _run("load-etsi-list", str(path), "--operator-cert", _pem(tmp_path, "op.pem", operator.root))
    assert "etsi:eu-av: signature verified (EU AV scheme); 2 anchor(s) loaded for eu.europa.ec.av.1" in out
    assert trusted_doc_types(live=True) == (EU_AGE_ATTESTATION,)

    path.write_bytes(
        _etsi_list(operator, providers, status="http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/withdrawn")
    )
    _run("load-etsi-list", str(path), "--operator-cert", _pem(tmp_path, "op.pem", operator.root))
    assert trusted_doc_types(live=True) == ()  # withdrawn services vouch for nothing


def test_a_tampered_etsi_list_is_rejected_and_changes_nothing(tmp_path):
    operator = issuer_create(name="Scheme operator")
    path = tmp_path / "eu-av.xml"
    path.write_bytes(_etsi_list(operator, [issuer_create()]).replace(b"EU AV scheme", b"EU AV schema"))
    with pytest.raises(CommandError, match="signature does not verify"):
        _run("load-etsi-list", str(path), "--operator-cert", _pem(tmp_path, "op.pem", operator.root))
    assert not TrustAnchorRecord.objects.exists()


def test_an_etsi_list_signed_by_another_operator_is_rejected(tmp_path):
    operator, impostor = issuer_create(name="Scheme operator"), issuer_create(name="Scheme operator")
    path = tmp_path / "eu-av.xml"
    path.write_bytes(_etsi_list(impostor, [issuer_create()]))
    with pytest.raises(CommandError, match="signature does not verify"):
        _run("load-etsi-list", str(path), "--operator-cert", _pem(tmp_path, "op.pem", operator.root))
    assert not TrustAnchorRecord.objects.exists()


def test_a_stale_etsi_list_is_rejected(tmp_path):
    operator = issuer_create(name="Scheme operator")
    path = tmp_path / "eu-av.xml"
    path.write_bytes(_etsi_list(operator, [issuer_create()], next_update="2025-01-01T00:00:00Z"))
    with pytest.raises(CommandError, match="stale"):
        _run("load-etsi-list", str(path), "--operator-cert", _pem(tmp_path, "op.pem", operator.root))
