"""SDK mode's client endpoints (/v1/client/...) and the clientSecret of POST /v1/sessions, over HTTP."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from sessions_api.models import VerificationSession
from tenants.models import ApiKey
from tenants.services import publishable_key_generate, publishable_key_revoke
from tests.factories import SETUP

SHOP = "https://shop.example"
pytestmark = pytest.mark.django_db


@pytest.fixture
def pk(onboarded):
    return publishable_key_generate(
        tenant=onboarded.tenant,
        mode="test",
        label="web",
        allowed_origins=[SHOP],
        return_urls=["myapp://verified"],
        actor=SETUP,
    )


@pytest.fixture
def browser():
    return Client()


def client_get(browser, path, key, *, origin=SHOP, secret=None):
    headers = {"Origin": origin} if origin else {}
    if secret:
        headers["Authorization"] = f"Bearer {secret}"
    return browser.get(path, {"key": key}, headers=headers)


def test_creation_returns_a_client_secret_once_and_the_read_never_does(sandbox_api):
    created = sandbox_api.create_session()
    assert created["clientSecret"] == f"{created['sessionId']}_secret_{created['sessionToken']}"
    assert "clientSecret" not in sandbox_api.get(f"/v1/sessions/{created['sessionId']}").json()["session"]


def test_config_answers_an_allowed_origin_with_cors_for_it_alone(browser, pk):
    response = client_get(browser, "/v1/client/config", pk.key)
    assert response.status_code == 200
    assert response.json() == {"mode": "test", "clientSessions": False, "ageLimit": None}
    assert response["Access-Control-Allow-Origin"] == SHOP
    assert "Access-Control-Allow-Credentials" not in response


def test_a_page_on_another_origin_gets_origin_not_allowed_as_a_readable_problem(browser, pk):
    response = client_get(browser, "/v1/client/config", pk.key, origin="https://evil.example")
    assert response.status_code == 403
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "origin_not_allowed" and "https://evil.example" in body["detail"]
    assert response["Access-Control-Allow-Origin"] == "*"


def test_a_preflight_is_answered_for_an_allowed_origin_only(browser, pk):
    allowed = browser.options(
        f"/v1/client/session?key={pk.key}",
        headers={
            "Origin": SHOP,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization",
        },
    )
    assert allowed.status_code == 204 and allowed["Access-Control-Allow-Origin"] == SHOP
    assert "Authorization" in allowed["Access-Control-Allow-Headers"]
    refused = browser.options(f"/v1/client/session?key={pk.key}", headers={"Origin": "https://evil.example"})
    assert refused.status_code == 403 and "Access-Control-Allow-Origin" not in refused


def test_status_read_with_the_client_secret_shows_status_and_reason_only(browser, pk, sandbox_api):
    created = sandbox_api.create_session(subject="user-9")
    response = client_get(browser, "/v1/client/session", pk.key, secret=created["clientSecret"])
    assert response.status_code == 200
    assert set(response.json()) == {"sessionId", "status", "reason", "mode", "expiresAt"}
    assert response.json()["status"] == "initiated"
    wrong = client_get(browser, "/v1/client/session", pk.key, secret=created["clientSecret"][:-2] + "xx")
    assert wrong.status_code == 401 and wrong.json()["code"] == "invalid_client_secret"


def test_a_live_session_with_a_test_publishable_key_is_a_mode_mismatch(browser, pk, api):
    created = api.create_session()
    response = client_get(browser, "/v1/client/session", pk.key, secret=created["clientSecret"])
    assert response.status_code == 400 and response.json()["code"] == "mode_mismatch"


def test_a_secret_key_sent_to_a_client_endpoint_is_refused_and_flagged(browser, onboarded):
    response = client_get(browser, "/v1/client/config", onboarded.test_key)
    assert response.status_code == 401 and response.json()["code"] == "secret_key_not_allowed"
    assert "rotate" in response.json()["detail"]
    assert ApiKey.objects.get(tenant=onboarded.tenant, mode="test").exposed_at is not None


def test_a_revoked_publishable_key_is_refused(browser, pk):
    publishable_key_revoke(key=pk, actor=SETUP)
    response = client_get(browser, "/v1/client/config", pk.key)
    assert response.status_code == 401 and response.json()["code"] == "invalid_publishable_key"


def test_client_sessions_are_off_by_default_and_take_the_keys_age_limit_when_on(browser, pk, sandbox_api):
    def create():
        return browser.post(
            f"/v1/client/sessions?key={pk.key}",
            {"subject": "u-1", "age_limit": 10},
            content_type="application/json",
            headers={"Origin": SHOP},
        )

    assert create().json()["code"] == "client_sessions_disabled"
    pk.client_sessions_enabled, pk.client_age_limit = True, 18
    pk.save()
    response = create()
    assert response.status_code == 201, response.content
    session_id = response.json()["sessionId"]
    read = sandbox_api.get(f"/v1/sessions/{session_id}").json()["session"]
    assert (read["subject"], read["ageLimit"], read["mode"]) == ("u-1", 18, "test")


def test_a_launch_url_works_once_and_only_within_60_seconds(browser, pk, sandbox_api):
    created = sandbox_api.create_session()

    def launch_url():
        response = browser.post(
            f"/v1/client/launch?key={pk.key}",
            {"returnUrl": "myapp://verified"},
            content_type="application/json",
            headers={"Authorization": f"Bearer {created['clientSecret']}"},
        )
        assert response.status_code == 201, response.content
        return response.json()["launchUrl"]

    url = launch_url()
    assert created["sessionToken"] not in url
    path = url.split("localhost:8000", 1)[-1]
    first = Client().get(path)
    assert first.status_code == 303 and first["Location"] == "/flow/"
    assert Client().get(path).status_code == 410  # used
    later = launch_url().split("localhost:8000", 1)[-1]
    from sessions_api.models import LaunchCode

    LaunchCode.objects.filter(used_at__isnull=True).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert Client().get(later).status_code == 410  # 60 s passed


def test_a_return_url_must_be_registered(browser, pk, sandbox_api):
    created = sandbox_api.create_session()
    response = browser.post(
        f"/v1/client/launch?key={pk.key}",
        {"returnUrl": "otherapp://x"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {created['clientSecret']}"},
    )
    assert response.status_code == 400 and response.json()["code"] == "return_url_not_registered"


def test_the_mobile_hand_off_returns_to_the_registered_url_with_session_id_and_status(browser, pk, sandbox_api):
    created = sandbox_api.create_session()
    url = browser.post(
        f"/v1/client/launch?key={pk.key}",
        {"returnUrl": "myapp://verified"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {created['clientSecret']}"},
    ).json()["launchUrl"]
    tab = Client()  # the in-app browser tab
    tab.get(url.split("localhost:8000", 1)[-1])
    tab.get("/flow/sandbox")
    outcome = tab.post("/flow/sandbox", {"outcome": "approved"})
    assert outcome.status_code == 303
    page = tab.get("/flow/result")
    expected = f"myapp://verified?session_id={created['sessionId']}&amp;status=approved"
    assert expected in page.content.decode()


def test_an_expired_session_is_reported_as_session_expired_at_launch(browser, pk, sandbox_api):
    created = sandbox_api.create_session()
    VerificationSession.objects.filter(pk=created["sessionId"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = browser.post(
        f"/v1/client/launch?key={pk.key}",
        {},
        content_type="application/json",
        headers={"Authorization": f"Bearer {created['clientSecret']}"},
    )
    assert response.status_code == 410 and response.json()["code"] == "session_expired"


def test_client_sessions_are_rate_limited_per_client_address(browser, pk, settings):
    settings.CLIENT_SESSIONS_BURST_PER_ADDRESS = 2
    settings.CLIENT_SESSIONS_RATE_PER_ADDRESS = 0.01
    pk.client_sessions_enabled, pk.client_age_limit = True, 18
    pk.save()

    def create(address):
        return browser.post(
            f"/v1/client/sessions?key={pk.key}",
            {"subject": "u"},
            content_type="application/json",
            headers={"Origin": SHOP},
            REMOTE_ADDR=address,
        )

    assert [create("203.0.113.9").status_code for _ in range(3)] == [201, 201, 429]
    refused = create("203.0.113.9")
    assert refused.json()["code"] == "rate_limited" and int(refused["Retry-After"]) >= 1
    assert create("198.51.100.20").status_code == 201  # another address has its own budget
    assert VerificationSession.objects.count() == 3


def test_an_operator_adds_a_publishable_key_in_the_admin_and_it_works_at_once(onboarded, db, client):
    from django.contrib.auth import get_user_model

    from tenants.models import PublishableKey

    client.force_login(get_user_model().objects.create_superuser("ops", "ops@ageverify.test", "pw-pw-pw-pw"))
    response = client.post(
        "/admin/tenants/publishablekey/add/",
        {
            "tenant": onboarded.tenant.pk,
            "mode": "live",
            "label": "app",
            "allowed_origins": "https://shop.example/",
            "return_urls": "myapp://verified",
            "client_age_limit": "",
            "client_notification_url": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    key = PublishableKey.objects.get(tenant=onboarded.tenant)
    assert key.key.startswith("av_pk_live_") and key.allowed_origins == [SHOP]
    assert Client().get("/v1/client/config", {"key": key.key}, headers={"Origin": SHOP}).json()["mode"] == "live"


@pytest.mark.parametrize("subject", ["user\u202e42", "user\x0042", "user\u200b42", "user\x1b[31m", "", "x" * 256])
def test_a_client_created_subject_follows_the_partner_apis_rules(browser, pk, subject):
    pk.client_sessions_enabled, pk.client_age_limit = True, 18
    pk.save()

    response = browser.post(
        f"/v1/client/sessions?key={pk.key}",
        {"subject": subject},
        content_type="application/json",
        headers={"Origin": SHOP},
    )

    assert response.status_code == 400 and response["Content-Type"] == "application/problem+json"
    assert "subject" in response.content.decode()
    assert not VerificationSession.objects.exists()


@pytest.mark.parametrize(
    "attempt",
    [
        lambda browser, pk: client_get(browser, "/v1/client/config", "av_pk_test_not-a-key"),
        lambda browser, pk: client_get(browser, "/v1/client/session", pk.key, secret="ses_01KNOPE_wrong_secret"),
        lambda browser, pk: client_get(browser, "/v1/client/config", "av_test_guessed_secret_key"),
    ],
    ids=["publishable-key", "client-secret", "secret-key"],
)
def test_failed_credentials_on_client_endpoints_are_limited_per_client_address(browser, pk, settings, attempt):
    settings.API_UNAUTHENTICATED_RATE_PER_SECOND = 0.01
    settings.API_UNAUTHENTICATED_BURST = 3

    answers = [attempt(browser, pk) for _ in range(4)]

    assert [answer.status_code for answer in answers] == [401, 401, 401, 429]
    assert answers[-1].json()["code"] == "rate_limited" and int(answers[-1]["Retry-After"]) >= 1
    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    assert attempt(elsewhere, pk).status_code == 401  # another address has its own budget
