"""The dashboard's side of issue 29: choosing the optional webhook events, and redacting a session."""

from sessions_api.models import VerificationSession
from tenants.models import AuditLogEntry
from tests.support.api_client import ApiClient
from webhooks.models import WebhookDelivery

PERSONAL = "holder-4711"


def _cancelled_session(onboarded, **fields) -> str:
    live = ApiClient(onboarded.live_key)
    session_id = live.create_session(subject=PERSONAL, metadata={"orderId": "A-1042"}, **fields)["sessionId"]
    live.post(f"/v1/sessions/{session_id}/cancel")
    return session_id


def test_opting_into_the_redacted_event_sends_it_and_is_audited(dashboard, onboarded, staff_user):
    page = dashboard.get("/dashboard/webhooks/").content.decode()
    assert 'value="verification.redacted"' in page and "checked" not in page.split('id="webhook-events-live"')[1][:900]

    saved = dashboard.post(
        "/dashboard/webhooks/events/", {"mode": "live", "events": ["verification.redacted", "made.up"]}, follow=True
    )

    assert "Events sent for live sessions: verification.completed, verification.redacted." in saved.content.decode()
    onboarded.tenant.refresh_from_db()
    assert onboarded.tenant.webhook_extra_events == {"live": ["verification.redacted"]}
    entry = AuditLogEntry.objects.get(action="webhook_events.changed")
    assert (entry.actor, entry.target_id, entry.extra["events"]) == (staff_user, "live", ["verification.redacted"])
    session_id = _cancelled_session(onboarded, notification_url="https://partner.example.com/hooks")
    ApiClient(onboarded.live_key).post(f"/v1/sessions/{session_id}/redact")
    assert WebhookDelivery.objects.filter(subject_ref=session_id, event_type="verification.redacted").count() == 1


def test_the_test_mode_choice_does_not_opt_the_live_mode_in(dashboard, onboarded):
    dashboard.post("/dashboard/webhooks/events/", {"mode": "test", "events": ["verification.redacted"]})
    session_id = _cancelled_session(onboarded, notification_url="https://partner.example.com/hooks")
    ApiClient(onboarded.live_key).post(f"/v1/sessions/{session_id}/redact")
    assert list(WebhookDelivery.objects.filter(subject_ref=session_id).values_list("event_type", flat=True)) == [
        "verification.completed"
    ]


def test_redacting_from_the_dashboard_needs_the_confirmation_and_is_audited(dashboard, onboarded, staff_user):
    session_id = _cancelled_session(onboarded)
    detail = f"/dashboard/sessions/{session_id}/"
    page = dashboard.get(detail).content.decode()
    assert PERSONAL in page and "A-1042" in page and 'id="redact-form"' in page

    unconfirmed = dashboard.post(f"{detail}redact/", {}, follow=True).content.decode()
    assert "tick the box to confirm" in unconfirmed
    assert VerificationSession.objects.get(pk=session_id).subject == PERSONAL

    done = dashboard.post(f"{detail}redact/", {"confirm": "erase"}, follow=True).content.decode()
    dashboard.post(f"{detail}redact/", {"confirm": "erase"})  # twice: still one audit entry

    assert "were erased" in done
    assert PERSONAL not in done and "A-1042" not in done and 'id="redact-form"' not in done
    assert 'id="session-redacted"' in done
    listed = dashboard.get("/dashboard/sessions/").content.decode()
    assert PERSONAL not in listed
    entry = AuditLogEntry.objects.get(action="session.redacted")
    assert (entry.actor, entry.target_id) == (staff_user, session_id)
    assert ApiClient(onboarded.live_key).get(f"/v1/sessions/{session_id}").json()["session"]["subject"] == ""


def test_an_open_session_has_no_redact_button_and_cannot_be_redacted(dashboard, onboarded):
    session_id = ApiClient(onboarded.live_key).create_session(subject=PERSONAL)["sessionId"]
    detail = f"/dashboard/sessions/{session_id}/"
    assert 'id="redact-form"' not in dashboard.get(detail).content.decode()
    refused = dashboard.post(f"{detail}redact/", {"confirm": "erase"}, follow=True).content.decode()
    assert "Only a final session" in refused
    assert VerificationSession.objects.get(pk=session_id).subject == PERSONAL


def test_another_tenants_session_cannot_be_redacted(dashboard, rival):
    session_id = _cancelled_session(rival)
    response = dashboard.post(f"/dashboard/sessions/{session_id}/redact/", {"confirm": "erase"})
    assert response.status_code == 404
    assert VerificationSession.objects.get(pk=session_id).subject == PERSONAL


def test_a_session_cancelled_through_the_api_is_not_labelled_cancelled_by_the_user(dashboard, onboarded):
    from django.test import Client

    from tests.support.flow import start_path

    by_partner = _cancelled_session(onboarded)
    by_user = ApiClient(onboarded.live_key).create_session(subject="user-9")
    browser = Client()
    browser.get(start_path(by_user["verificationUrl"]))
    browser.post("/flow/cancel")

    detail = dashboard.get(f"/dashboard/sessions/{by_partner}/").content.decode()
    listed = dashboard.get("/dashboard/sessions/").content.decode()
    user_detail = dashboard.get(f"/dashboard/sessions/{by_user['sessionId']}/").content.decode()

    assert "Cancelled by the user" not in detail and "Cancelled by you through the API" in detail
    assert listed.count("Cancelled by you through the API") == 1 and listed.count("Cancelled by the user") == 1
    assert "Cancelled by the user" in user_detail and "through the API" not in user_detail


def test_redacting_through_the_api_is_audited_as_the_dashboards_redaction_is(dashboard, onboarded):
    session_id = _cancelled_session(onboarded)
    key = onboarded.tenant.api_keys.get(mode="live", revoked_at=None)
    partner = ApiClient(onboarded.live_key)

    assert partner.post(f"/v1/sessions/{session_id}/redact").status_code == 200
    assert partner.post(f"/v1/sessions/{session_id}/redact").status_code == 200  # twice: still one entry

    entry = AuditLogEntry.objects.get(action="session.redacted")
    assert (entry.actor, entry.target_id, entry.ip_address) == (None, session_id, "127.0.0.1")
    assert entry.actor_label == f"API key {key.display_prefix}"
    log = dashboard.get("/dashboard/audit-log/").content.decode()
    assert "Session redacted" in log and f"API key {key.display_prefix}" in log and session_id in log
