"""Publishable keys in the dashboard: generate with origins and return URLs, change settings, revoke; the snippet."""

import pytest
from django.test import Client

from tenants.models import AuditLogEntry, PublishableKey
from tests.factories import SETUP

pytestmark = pytest.mark.django_db
SHOP = "https://shop.example"


def _generate(dashboard, **fields):
    body = {
        "mode": "test",
        "label": "web shop",
        "allowed_origins": f"{SHOP}\nhttps://www.shop.example/",
        "return_urls": "myapp://verified",
        **fields,
    }
    return dashboard.post("/dashboard/sdk/", body)


def test_a_generated_key_is_listed_with_its_origins_and_works_from_them_at_once(dashboard, onboarded):
    assert _generate(dashboard).status_code == 302
    key = PublishableKey.objects.get(tenant=onboarded.tenant)
    assert key.key.startswith("av_pk_test_")
    assert key.allowed_origins == [SHOP, "https://www.shop.example"]  # trailing slash normalized away
    page = dashboard.get("/dashboard/sdk/").content.decode()
    assert key.key in page and "myapp://verified" in page
    assert "script-src http://testserver; frame-src http://testserver" in page  # the CSP lines of the snippet
    assert f'AgeVerify("{key.key}")' in page
    answer = Client().get("/v1/client/config", {"key": key.key}, headers={"Origin": SHOP})
    assert answer.status_code == 200
    assert AuditLogEntry.objects.filter(action=AuditLogEntry.Action.PUBLISHABLE_KEY_GENERATED).exists()


def test_an_origin_with_a_path_or_plain_http_is_refused_with_a_clear_message(dashboard, onboarded):
    response = _generate(dashboard, allowed_origins="http://shop.example\nhttps://shop.example/checkout")
    assert response.status_code == 400
    assert b"only https origins may embed the flow" in response.content
    assert not PublishableKey.objects.exists()


def test_a_return_url_with_a_dangerous_scheme_is_refused(dashboard):
    response = _generate(dashboard, return_urls="javascript:alert(1)")
    assert response.status_code == 400 and b"not a usable return URL" in response.content


def test_settings_change_and_revocation_take_effect_at_once(dashboard, onboarded):
    _generate(dashboard)
    key = PublishableKey.objects.get(tenant=onboarded.tenant)
    changed = dashboard.post(
        f"/dashboard/sdk/{key.pk}/",
        {
            "label": "shop",
            "allowed_origins": "https://other.example",
            "return_urls": "",
            "client_sessions_enabled": "on",
            "client_age_limit": "18",
            "client_notification_url": "",
        },
    )
    assert changed.status_code == 302
    key.refresh_from_db()
    assert key.allowed_origins == ["https://other.example"] and key.client_age_limit == 18
    assert Client().get("/v1/client/config", {"key": key.key}, headers={"Origin": SHOP}).status_code == 403
    assert dashboard.post(f"/dashboard/sdk/{key.pk}/revoke/").status_code == 302
    assert Client().get("/v1/client/config", {"key": key.key}).json()["code"] == "invalid_publishable_key"


def test_client_sessions_need_an_age_limit(dashboard, onboarded):
    response = _generate(dashboard, client_sessions_enabled="on")
    assert response.status_code == 400 and b"need the age limit" in response.content


def test_another_tenants_key_is_not_found(dashboard, rival):
    from tenants.services import publishable_key_generate

    theirs = publishable_key_generate(tenant=rival.tenant, mode="test", actor=SETUP)
    assert dashboard.get(f"/dashboard/sdk/{theirs.pk}/").status_code == 404
    assert dashboard.post(f"/dashboard/sdk/{theirs.pk}/revoke/").status_code == 404
    assert theirs.key not in dashboard.get("/dashboard/sdk/").content.decode()


def test_a_secret_key_sent_from_a_browser_is_flagged_on_the_sdk_page(dashboard, onboarded):
    Client().get("/v1/client/config", {"key": onboarded.test_key})
    assert b"was sent from a browser or app" in dashboard.get("/dashboard/sdk/").content


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hooks",
        "https://localhost/hooks",
        "https://169.254.169.254/latest/meta-data",
        "https://10.1.2.3/hooks",
        "https://hooks.partner.example:99999/hooks",
        "http://hooks.partner.example/hooks",
        "javascript:alert(1)",
    ],
)
def test_a_client_notification_url_that_could_never_be_sent_to_is_refused_when_saved(dashboard, onboarded, url):
    response = _generate(dashboard, client_notification_url=url)
    assert response.status_code == 400 and b"The notification URL must" in response.content
    assert not PublishableKey.objects.exists()

    _generate(dashboard)
    key = PublishableKey.objects.get()
    edit = dashboard.post(
        f"/dashboard/sdk/{key.pk}/",
        {"label": "shop", "allowed_origins": SHOP, "return_urls": "", "client_notification_url": url},
    )
    assert edit.status_code == 400
    key.refresh_from_db()
    assert key.client_notification_url == ""


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example;script-src 'unsafe-inline' *",
        "https://shop.example 'unsafe-inline'",
        "https://shop.example:99999",
        'https://shop.example"><script>',
        "https://shop.example,https://evil.example",
        "https://*.shop.example",
        "https://[fe80::1%;script-src 'unsafe-inline' *;x]",  # an IPv6 zone id carrying a policy
        "https://[fe80::1%25eth0]",
    ],
)
def test_an_allowed_origin_must_be_exactly_scheme_host_and_port(dashboard, onboarded, origin):
    response = _generate(dashboard, allowed_origins=origin)
    assert response.status_code == 400
    assert not PublishableKey.objects.exists()
