"""`manage.py demo_seed` (run by scripts/demo): the demo's keys stay the same from one run to the next."""

import io
import json
import stat

import pytest
from django.core.management import call_command

from tests.factories import SETUP
from tests.support.api_client import ApiClient


@pytest.fixture
def demo_settings(settings, tmp_path, db):
    settings.DEBUG = True
    settings.VAR_DIR = tmp_path
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # the demo's logins, quickly
    return settings


def seed() -> tuple[dict, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("demo_seed", "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def test_a_second_run_prints_the_same_working_keys(demo_settings, tmp_path):
    first, _ = seed()
    second, note = seed()

    assert (second["api_key"], second["test_api_key"]) == (first["api_key"], first["test_api_key"])
    assert note == ""
    assert ApiClient(second["api_key"]).create_session()["mode"] == "live"
    assert ApiClient(second["test_api_key"]).create_session()["mode"] == "test"
    state = tmp_path / "demo-keys.json"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert json.loads(state.read_text())["api_key"] == first["api_key"]


def test_without_its_local_state_the_demo_replaces_its_keys_and_says_so(demo_settings, tmp_path):
    first, _ = seed()
    (tmp_path / "demo-keys.json").unlink()

    second, note = seed()

    assert second["api_key"] != first["api_key"] and second["test_api_key"] != first["test_api_key"]
    assert "New live demo key" in note and "New test demo key" in note
    assert ApiClient(first["api_key"]).get("/v1/sessions").status_code == 401
    assert ApiClient(second["api_key"]).get("/v1/sessions").status_code == 200
    assert seed()[0]["api_key"] == second["api_key"]


def test_a_revoked_demo_key_is_replaced_and_the_other_kept(demo_settings, onboarded):
    from tenants.selectors import api_key_resolve
    from tenants.services import api_key_revoke

    first, _ = seed()
    api_key_revoke(api_key=api_key_resolve(first["test_api_key"]), actor=SETUP)

    second, note = seed()

    assert second["api_key"] == first["api_key"]
    assert second["test_api_key"] != first["test_api_key"] and "New test demo key" in note
