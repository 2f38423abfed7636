"""API keys in the dashboard: a generated key is shown once and works at once; a revoked key fails at once."""

import re

import pytest

from tenants.models import ApiKey, AuditLogEntry
from tests.factories import SETUP
from tests.support.api_client import ApiClient


def _generate(dashboard, mode="live", label="backend"):
    response = dashboard.post("/dashboard/keys/generate/", {"mode": mode, "label": label})
    assert response.status_code == 200, response.content
    raw_key = re.search(rb'id="new-api-key"[^>]*>([^<]+)<', response.content).group(1).decode()
    return response, raw_key


def test_a_generated_live_key_is_shown_once_and_creates_sessions_at_once(dashboard, onboarded):
    response, raw_key = _generate(dashboard)

    assert raw_key.startswith("av_live_")
    assert b"It will not be shown again" in response.content
    assert "no-store" in response["Cache-Control"]  # every dashboard page: the key must not sit in a cache
    created = ApiClient(raw_key).post("/v1/sessions", {"subject": "user-1", "age_limit": 18})
    assert created.status_code == 201
    assert created.json()["session"]["mode"] == "live"
    home = dashboard.get("/dashboard/").content.decode()
    assert raw_key not in home
    assert raw_key[:20] + "…" in home  # the prefix stays listed


def test_a_generated_test_key_creates_sandbox_sessions(dashboard):
    _, raw_key = _generate(dashboard, mode="test")

    created = ApiClient(raw_key).post("/v1/sessions", {"subject": "user-1", "age_limit": 18})

    assert raw_key.startswith("av_test_")
    assert created.json()["session"]["mode"] == "test"


def test_the_home_page_lists_key_prefixes_with_created_and_last_used_times(dashboard, onboarded, api):
    api.create_session()

    page = dashboard.get("/dashboard/").content.decode()

    live = onboarded.tenant.api_keys.get(mode="live")
    test = onboarded.tenant.api_keys.get(mode="test")
    live_row, test_row = _key_row(page, live), _key_row(page, test)
    assert f"av_live_{live.prefix}…" in live_row and f"av_test_{test.prefix}…" in test_row
    assert f"{live.created_at:%b} {live.created_at.day}, {live.created_at:%Y %H:%M} UTC" in live_row
    assert "just now" in live_row  # last used
    assert "Never" in test_row


def _key_row(page: str, api_key: ApiKey) -> str:
    return re.search(rf'<tr data-key-prefix="{re.escape(api_key.prefix)}">(.*?)</tr>', page, flags=re.S).group(1)


def test_revoking_a_key_asks_for_confirmation_then_makes_it_fail_at_once(dashboard, onboarded, api):
    live = onboarded.tenant.api_keys.get(mode="live")
    assert api.post("/v1/sessions", {"subject": "u", "age_limit": 18}).status_code == 201

    confirm = dashboard.get(f"/dashboard/keys/{live.pk}/revoke/")
    assert confirm.status_code == 200 and b"Revoke key" in confirm.content
    live.refresh_from_db()
    assert live.revoked_at is None  # a GET changes nothing

    response = dashboard.post(f"/dashboard/keys/{live.pk}/revoke/", follow=True)

    assert b"is revoked" in response.content
    refused = api.post("/v1/sessions", {"subject": "u", "age_limit": 18})
    assert refused.status_code == 401
    assert refused.json()["code"] == "invalid_api_key"


def test_revoking_an_already_revoked_key_changes_nothing(dashboard, onboarded):
    live = onboarded.tenant.api_keys.get(mode="live")
    dashboard.post(f"/dashboard/keys/{live.pk}/revoke/")
    first_time = ApiKey.objects.get(pk=live.pk).revoked_at

    response = dashboard.post(f"/dashboard/keys/{live.pk}/revoke/", follow=True)

    assert b"was already revoked" in response.content
    assert ApiKey.objects.get(pk=live.pk).revoked_at == first_time
    assert AuditLogEntry.objects.filter(action=AuditLogEntry.Action.API_KEY_REVOKED).count() == 1


def test_generating_and_revoking_are_recorded_in_the_audit_log(dashboard, onboarded, staff_user):
    _generate(dashboard, label="ci")
    key = onboarded.tenant.api_keys.get(label="ci")
    dashboard.post(f"/dashboard/keys/{key.pk}/revoke/", REMOTE_ADDR="198.51.100.4")

    entries = list(
        AuditLogEntry.objects.exclude(actor_label=SETUP.label).filter(tenant=onboarded.tenant).order_by("created_at")
    )

    assert [entry.action for entry in entries] == ["api_key.generated", "api_key.revoked"]
    assert all(entry.actor == staff_user and entry.actor_label == "alice <alice@acme.test>" for entry in entries)
    assert entries[0].target_label == key.display_prefix
    assert entries[0].extra == {"mode": "live", "label": "ci"}
    assert entries[1].ip_address == "198.51.100.4"
    log_page = dashboard.get("/dashboard/audit-log/").content.decode()
    assert "API key generated" in log_page and "API key revoked" in log_page and key.display_prefix in log_page


@pytest.mark.parametrize("form", [{"mode": "prod"}, {"mode": "live", "label": "x" * 101}, {}])
def test_invalid_key_requests_get_a_clear_error_and_create_nothing(dashboard, onboarded, form):
    response = dashboard.post("/dashboard/keys/generate/", form)

    assert response.status_code == 400
    assert b"av-field-error" in response.content
    assert onboarded.tenant.api_keys.count() == 2
    assert not AuditLogEntry.objects.exclude(actor_label=SETUP.label).exists()


def test_generating_a_key_takes_a_post(dashboard, onboarded):
    assert dashboard.get("/dashboard/keys/generate/").status_code == 405
    assert onboarded.tenant.api_keys.count() == 2


def test_the_number_of_active_keys_per_mode_is_capped_with_a_clear_message(dashboard, onboarded):
    for _ in range(9):  # onboarding made one live key: ten in all
        _generate(dashboard)

    response = dashboard.post("/dashboard/keys/generate/", {"mode": "live"})

    assert response.status_code == 400
    assert b"already has 10 active live keys" in response.content
    assert onboarded.tenant.api_keys.filter(mode="live").count() == 10
