"""`manage.py create_tenant NAME [--email EMAIL] [--enable-webhooks]` (CONTRACT 6): one JSON object of secrets."""

import base64
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tenants.models import ApiKey, Tenant
from tests.support.api_client import ApiClient


def _create_tenant(*args) -> dict:
    out = io.StringIO()
    call_command("create_tenant", *args, stdout=out)
    text = out.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n"), text  # one line: one JSON object, nothing else
    return json.loads(text)


def test_it_prints_one_json_object_with_the_tenant_id_and_its_secrets(db):
    printed = _create_tenant("Acme Games", "--email", "ops@acme.example")

    assert set(printed) == {"tenant_id", "api_key", "test_api_key", "webhook_secret", "test_webhook_secret"}
    tenant = Tenant.objects.get(pk=printed["tenant_id"])
    assert tenant.name == "Acme Games"
    assert tenant.contact_email == "ops@acme.example"
    assert tenant.webhook_secret == printed["webhook_secret"]
    assert tenant.test_webhook_secret == printed["test_webhook_secret"] != printed["webhook_secret"]
    assert printed["api_key"].startswith("av_live_")
    assert printed["test_api_key"].startswith("av_test_")
    assert printed["webhook_secret"].startswith("whsec_")
    for secret in (printed["webhook_secret"], printed["test_webhook_secret"]):
        assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32
    assert ApiKey.objects.filter(tenant=tenant, revoked_at__isnull=True).count() == 2


def test_the_printed_keys_work_against_the_api(db):
    printed = _create_tenant("Acme Games")

    live = ApiClient(printed["api_key"]).create_session()
    test = ApiClient(printed["test_api_key"]).create_session()

    assert (live["mode"], test["mode"]) == ("live", "test")
    assert ApiClient(printed["api_key"]).get(f"/v1/sessions/{live['sessionId']}").status_code == 200
    assert ApiClient(printed["test_api_key"]).get(f"/v1/sessions/{test['sessionId']}").status_code == 200
    assert printed["tenant_id"] in live["verificationUrl"]


def test_webhooks_are_off_unless_asked_for(db):
    plain = _create_tenant("Plain Shop")
    with_webhooks = _create_tenant("Hooked Shop", "--enable-webhooks")

    assert Tenant.objects.get(pk=plain["tenant_id"]).webhooks_enabled is False
    assert Tenant.objects.get(pk=with_webhooks["tenant_id"]).webhooks_enabled is True


def test_each_run_makes_a_new_tenant_with_new_secrets(db):
    first, second = _create_tenant("Same Name"), _create_tenant("Same Name")

    assert first["tenant_id"] != second["tenant_id"]
    assert {first["api_key"], first["test_api_key"]}.isdisjoint({second["api_key"], second["test_api_key"]})


@pytest.mark.parametrize("email", ["not-an-email", "a@", "@b.example", "two@@b.example"])
def test_a_bad_email_is_a_command_error_and_creates_nothing(db, email):
    with pytest.raises(CommandError, match="not a valid email"):
        call_command("create_tenant", "Acme", "--email", email, stdout=io.StringIO())

    assert not Tenant.objects.exists()


@pytest.mark.parametrize("name", ["", "   ", "x" * 201])
def test_a_blank_or_overlong_name_is_a_command_error(db, name):
    with pytest.raises(CommandError, match="NAME"):
        call_command("create_tenant", name, stdout=io.StringIO())

    assert not Tenant.objects.exists()
