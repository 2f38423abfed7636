"""Tenant isolation: staff of one tenant never see or touch another tenant's data, on any page or action.

Another tenant's objects answer 404, exactly like ids that do not exist, so their existence does not leak.
"""

import pytest

from tenants.audit import Actor
from tenants.models import AuditLogEntry
from tenants.services import tenant_webhook_secret_reveal
from tests.factories import SETUP, delivery_with_attempt, finished_session
from tests.support.api_client import ApiClient


@pytest.fixture
def rival_data(rival):
    """Everything the rival tenant has: a session with a webhook and an attempt, keys and audit entries."""
    from django.contrib.auth import get_user_model

    session, delivery = delivery_with_attempt(rival.tenant)
    mallory = get_user_model().objects.get(username="mallory")
    tenant_webhook_secret_reveal(tenant=rival.tenant, actor=Actor(user=mallory))
    return {
        "tenant": rival.tenant,
        "session": session,
        "delivery": delivery,
        "key": rival.tenant.api_keys.get(mode="live"),
        "raw_key": rival.live_key,
        "subject": session.subject,
    }


def _request(data, name):
    """(method, url, form) of each page and action that names an object by its id."""
    return {
        "session detail": ("get", f"/dashboard/sessions/{data['session'].id}/", None),
        "revoke confirmation": ("get", f"/dashboard/keys/{data['key'].pk}/revoke/", None),
        "revoke": ("post", f"/dashboard/keys/{data['key'].pk}/revoke/", {}),
        "re-send": ("post", f"/dashboard/webhooks/deliveries/{data['delivery'].pk}/resend/", {}),
        "switch tenant": ("post", "/dashboard/tenant/switch/", {"tenant": data["tenant"].id}),
    }[name]


@pytest.mark.parametrize("name", ["session detail", "revoke confirmation", "revoke", "re-send", "switch tenant"])
def test_another_tenants_object_is_a_404_on_every_page_and_action(dashboard, rival_data, name):
    method, url, form = _request(rival_data, name)

    response = dashboard.post(url, form) if method == "post" else dashboard.get(url)

    assert response.status_code == 404


UNKNOWN_IDS = ["/dashboard/sessions/ses_01JZZZZZZZZZZZZZZZZZZZZZZZ/", "/dashboard/keys/999999/revoke/"]


@pytest.mark.parametrize("url", UNKNOWN_IDS)
def test_an_unknown_id_gets_the_same_404(dashboard, url):
    assert dashboard.get(url).status_code == 404


@pytest.mark.parametrize("delivery_id", ["msg_01JZZZZZZZZZZZZZZZZZZZZZZZ", "msg_%00", "x" * 300])
def test_re_sending_an_unknown_or_malformed_delivery_id_is_a_404(dashboard, delivery_id):
    assert dashboard.post(f"/dashboard/webhooks/deliveries/{delivery_id}/resend/").status_code == 404


def test_actions_refused_on_another_tenant_change_nothing(dashboard, rival_data):
    dashboard.post(f"/dashboard/keys/{rival_data['key'].pk}/revoke/")
    dashboard.post(f"/dashboard/webhooks/deliveries/{rival_data['delivery'].pk}/resend/")

    assert ApiClient(rival_data["raw_key"]).post("/v1/sessions", {"subject": "u", "age_limit": 18}).status_code == 201
    rival_data["delivery"].refresh_from_db()
    assert rival_data["delivery"].attempt_count == 1 and rival_data["delivery"].cycle_first_attempt == 1
    assert not AuditLogEntry.objects.exclude(actor_label=SETUP.label).exclude(tenant=rival_data["tenant"]).exists()


def test_no_list_or_page_shows_another_tenants_data(dashboard, onboarded, rival_data):
    finished_session(onboarded.tenant, subject="own-subject")
    pages = {
        url: dashboard.get(url).content.decode()
        for url in [
            "/dashboard/",
            "/dashboard/?usage=test",
            "/dashboard/sessions/",
            "/dashboard/webhooks/",
            "/dashboard/audit-log/",
        ]
    }
    secrets = [
        rival_data["tenant"].id,
        rival_data["session"].id,
        rival_data["subject"],
        rival_data["delivery"].pk,
        rival_data["key"].prefix,
        "mallory",
        "Rival Inc",
    ]

    for url, page in pages.items():
        for secret in secrets:
            assert secret not in page, f"{secret} leaked on {url}"
    assert "own-subject" in pages["/dashboard/sessions/"]


@pytest.mark.parametrize("field", ["session", "subject"])
def test_searching_for_another_tenants_session_finds_nothing(dashboard, rival_data, field):
    term = rival_data["session"].id if field == "session" else rival_data["subject"]

    page = dashboard.get("/dashboard/sessions/", {"q": term}).content.decode()

    results = page.split('id="sessions-results"', 1)[1].split("av-pagination-bar", 1)[0]
    assert "No session matches these filters" in results
    assert term not in results


def test_the_usage_panel_counts_only_the_current_tenants_sessions(dashboard, onboarded, rival):
    finished_session(onboarded.tenant, status="approved")
    for _ in range(3):
        finished_session(rival.tenant, status="denied")

    page = dashboard.get("/dashboard/").content.decode()

    assert '<dd id="usage-total">1</dd>' in page
    assert '<dd id="approval-rate">100.0 %</dd>' in page
