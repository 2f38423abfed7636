"""Hostile text from partners' calls and receivers is shown escaped; pages cannot be framed or load others' assets."""

import re

import pytest

from sessions_api.state_machine import session_cancel
from tests.factories import WebhookAttemptFactory
from webhooks.models import WebhookDelivery

HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(2)>', "'</title><svg onload=alert(3)>"]


@pytest.fixture
def hostile_pages(dashboard, api, onboarded):
    """Every dashboard page, after sessions, a webhook response and a key label carrying markup."""
    session_ids = []
    for text in HOSTILE:
        session = api.create_session(
            subject=text, notification_url="https://hooks.example.com/?q=" + text.replace(" ", "%20")
        )
        session_cancel(session_id=session["sessionId"])
        session_ids.append(session["sessionId"])
    delivery = WebhookDelivery.objects.get(subject_ref=session_ids[0])
    WebhookAttemptFactory(delivery=delivery, latency_ms=9, error=HOSTILE[1], response_excerpt=HOSTILE[0])
    dashboard.post("/dashboard/keys/generate/", {"mode": "live", "label": HOSTILE[1][:100]})
    paths = [
        "/dashboard/",
        "/dashboard/?usage=test",
        "/dashboard/sessions/",
        "/dashboard/webhooks/",
        "/dashboard/audit-log/",
        f"/dashboard/sessions/?q={HOSTILE[0]}",
        f"/dashboard/audit-log/?q={HOSTILE[1]}",
        *[f"/dashboard/sessions/{session_id}/" for session_id in session_ids],
    ]
    return {path: dashboard.get(path) for path in paths}


def test_markup_in_subjects_urls_labels_and_webhook_responses_is_escaped_everywhere(hostile_pages):
    for path, response in hostile_pages.items():
        page = response.content.decode()
        assert response.status_code == 200, path
        for text in HOSTILE:
            assert text not in page, (path, text)
        assert not re.search(r"<(img|svg)\b[^>]*\bon(error|load)=", page), path
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile_pages["/dashboard/sessions/"].content.decode()


def test_pages_cannot_be_framed_or_cached_and_load_no_asset_from_elsewhere(hostile_pages):
    for path, response in hostile_pages.items():
        assert response["X-Frame-Options"] == "DENY", path
        assert "no-store" in response["Cache-Control"], path
        assets = re.findall(r'<(?:script|img|link|iframe)\b[^>]*\b(?:src|href)="([^"]+)"', response.content.decode())
        assert assets and all(url.startswith("/static/") for url in assets), (path, assets)


@pytest.mark.parametrize("path", ["/dashboard/login/", "/admin/login/", "/dashboard/password_reset/"])
def test_sign_in_pages_send_hsts_and_a_content_security_policy(db, client, path):
    response = client.get(path, secure=True)

    assert response.status_code == 200
    assert response["Strict-Transport-Security"].startswith("max-age=31536000")
    policy = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
    assert policy["default-src"] == "'self'" and policy["script-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'" and policy["object-src"] == "'none'"


def test_signed_in_dashboard_pages_carry_the_policy_too(dashboard):
    assert "script-src 'self'" in dashboard.get("/dashboard/webhooks/", secure=True)["Content-Security-Policy"]
