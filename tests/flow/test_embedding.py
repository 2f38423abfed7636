"""The frame document and its begin step, as the browser sees them over HTTP: framing, cookies, refusals."""

import json

import pytest
from django.test import Client

from tenants.services import publishable_key_generate
from tests.factories import SETUP

SHOP = "https://shop.example"
SERVICE = "http://testserver"
pytestmark = pytest.mark.django_db


@pytest.fixture
def pk(onboarded):
    return publishable_key_generate(
        tenant=onboarded.tenant, mode="test", allowed_origins=[SHOP, "https://b.example"], actor=SETUP
    )


def begin(client, pk, body, *, origin=SERVICE):
    return client.post(
        "/flow/embed/begin",
        json.dumps({"key": pk.key, "origin": SHOP, **body}),
        content_type="application/json",
        headers={"Origin": origin},
    )


def test_the_frame_document_may_be_framed_by_the_one_allowed_origin_that_embeds_it(pk):
    response = Client().get("/flow/embed", {"key": pk.key, "origin": SHOP, "channel": "frame"})
    assert response.status_code == 200
    assert "frame-ancestors https://shop.example;" in response["Content-Security-Policy"] + ";"
    assert "b.example" not in response["Content-Security-Policy"]  # the key's other origins stay unknown
    assert "X-Frame-Options" not in response


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example;script-src 'unsafe-inline' *",
        "https://evil.example 'unsafe-inline'",
        "https://evil.example,https://x.example",
        "https://evil.example:99999",
        "https://[fe80::1%;script-src 'unsafe-inline' *;x]",
    ],
)
def test_an_origin_parameter_that_is_not_exactly_an_origin_never_reaches_the_policy(pk, origin):
    response = Client().get("/flow/embed", {"key": pk.key, "origin": origin, "channel": "frame"})

    policy = response["Content-Security-Policy"]
    assert "evil.example" not in policy and "unsafe-inline' *" not in policy and "fe80" not in policy
    assert "frame-ancestors 'none'" in policy


def test_for_an_origin_not_allowed_the_frame_says_so_to_that_origin_alone(pk):
    response = Client().get("/flow/embed", {"key": pk.key, "origin": "https://evil.example"})
    assert 'data-refusal="origin_not_allowed"' in response.content.decode()
    assert "frame-ancestors https://evil.example" in response["Content-Security-Policy"]
    assert "shop.example" not in response.content.decode()


def test_begin_binds_the_frame_with_a_cross_site_partitioned_cookie_and_pages_framed_by_the_parent(pk, sandbox_api):
    created = sandbox_api.create_session()
    client = Client()
    response = begin(client, pk, {"clientSecret": created["clientSecret"], "channel": "frame"})
    assert response.status_code == 200 and response.json()["next"] == "/flow/"
    cookie = response.cookies["av_flow"].output()
    assert "SameSite=None; Partitioned" in cookie and "Secure" in cookie and "HttpOnly" in cookie
    page = client.get("/flow/")
    assert page.status_code == 200
    assert "frame-ancestors https://shop.example;" in page["Content-Security-Policy"] + ";"
    assert "b.example" not in page["Content-Security-Policy"]  # only the parent bound at begin
    assert "SameSite=None; Partitioned" in page.cookies["csrftoken"].output()


def test_begin_refuses_another_page_a_bad_secret_and_a_parent_not_allowed(pk, sandbox_api):
    created = sandbox_api.create_session()
    assert begin(Client(), pk, {"clientSecret": created["clientSecret"]}, origin=SHOP).status_code == 403
    wrong = begin(Client(), pk, {"clientSecret": created["clientSecret"][:-3] + "abc"})
    assert (wrong.status_code, wrong.json()["code"]) == (401, "invalid_client_secret")
    elsewhere = Client().post(
        "/flow/embed/begin",
        json.dumps({"key": pk.key, "origin": "https://evil.example", "clientSecret": created["clientSecret"]}),
        content_type="application/json",
        headers={"Origin": SERVICE},
    )
    assert elsewhere.json()["code"] == "origin_not_allowed"


def test_a_popup_keeps_its_opener_and_cannot_be_framed(pk, sandbox_api):
    response = Client().get("/flow/embed", {"key": pk.key, "origin": SHOP, "channel": "popup"})
    assert response["Cross-Origin-Opener-Policy"] == "unsafe-none"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


def test_the_web_flow_keeps_its_lax_cookie_and_refuses_framing(sandbox_api, settings):
    created = sandbox_api.create_session()
    client = Client()
    start = client.get(created["verificationUrl"].removeprefix(settings.PUBLIC_BASE_URL))
    assert "SameSite=Lax" in start.cookies["av_flow"].output()
    assert "frame-ancestors 'none'" in client.get("/flow/")["Content-Security-Policy"]


def test_an_unknown_or_revoked_key_is_reported_to_the_page_that_asked(pk):
    from tenants.services import publishable_key_revoke

    publishable_key_revoke(key=pk, actor=SETUP)
    response = Client().get("/flow/embed", {"key": pk.key, "origin": SHOP})
    assert 'data-refusal="invalid_publishable_key"' in response.content.decode()
    assert "frame-ancestors https://shop.example;" in response["Content-Security-Policy"] + ";"


@pytest.mark.parametrize("subject", ["", "user\x0042", "user\u202e42", None, 42])
def test_begin_refuses_a_subject_the_partner_api_would_refuse_with_a_json_answer(pk, subject):
    from sessions_api.models import VerificationSession

    pk.client_sessions_enabled, pk.client_age_limit = True, 18
    pk.save()

    response = begin(Client(), pk, {"session": {"subject": subject}, "channel": "frame"})

    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    assert response.json()["code"] == "invalid_subject"
    assert not VerificationSession.objects.exists()
