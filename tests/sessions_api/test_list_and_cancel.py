"""GET /v1/sessions (newest first, filters, cursor pages) and POST /v1/sessions/{id}/cancel, as a partner calls them."""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from sessions_api.models import SessionEvent, VerificationSession
from tenants.services import tenant_create
from tests.factories import SETUP, session_past_expiry
from tests.support.api_client import ApiClient
from tests.support.assertions import assert_problem, assert_validation_error
from webhooks.models import WebhookDelivery


def listed(client, **query):
    response = client.get("/v1/sessions" + ("?" + urlencode(query) if query else ""))
    assert response.status_code == 200, response.content
    return response.json()


def ids(page):
    return [item["session"]["sessionId"] for item in page["data"]]


def created_at(session_id, when):
    VerificationSession.objects.filter(pk=session_id).update(created_at=when)


def test_the_list_shows_each_session_as_the_read_does_newest_first(api):
    first = api.create_session(subject="user-1")["sessionId"]
    second = api.create_session(subject="user-2")["sessionId"]

    page = listed(api)

    assert ids(page) == [second, first]
    assert page["data"][0] == api.get(f"/v1/sessions/{second}").json()
    assert (page["hasMore"], page["nextCursor"]) == (False, None)
    assert api.get("/v1/sessions")["Cache-Control"] == "no-store"


def test_pages_follow_the_cursor_without_gaps_or_repeats_even_with_equal_creation_times(api):
    made = [api.create_session(subject=f"user-{n}")["sessionId"] for n in range(5)]
    same_moment = timezone.now() - timedelta(minutes=1)
    for session_id in made[1:4]:
        created_at(session_id, same_moment)

    seen, cursor = [], None
    while True:
        page = listed(api, limit=2, **({"cursor": cursor} if cursor else {}))
        seen += ids(page)
        assert len(page["data"]) <= 2
        if not page["hasMore"]:
            assert page["nextCursor"] is None
            break
        cursor = page["nextCursor"]

    assert sorted(seen) == sorted(made) and len(seen) == 5
    assert seen[:2] == [made[4], made[0]]  # the two left at their creation time, newest first
    assert seen[2:] == sorted(made[1:4], reverse=True)  # then the three tied ones, by id, greatest first


def test_filters_by_status_subject_and_creation_range_combine(api):
    old = api.create_session(subject="user-a")["sessionId"]
    created_at(old, timezone.now() - timedelta(days=3))
    cancelled = api.create_session(subject="user-a")["sessionId"]
    api.post(f"/v1/sessions/{cancelled}/cancel")
    other = api.create_session(subject="user-b")["sessionId"]

    assert ids(listed(api, subject="user-a")) == [cancelled, old]
    assert ids(listed(api, status="denied")) == [cancelled]
    assert ids(listed(api, status="initiated,denied", subject="user-a")) == [cancelled, old]
    since = (timezone.now() - timedelta(days=1)).isoformat()
    assert ids(listed(api, created_from=since)) == [other, cancelled]
    assert ids(listed(api, created_before=since)) == [old]
    assert ids(listed(api, created_from=since.replace("+00:00", "Z"), status="initiated")) == [other]


def test_a_key_lists_only_its_own_tenant_and_mode(api, sandbox_api, db):
    live = api.create_session()["sessionId"]
    sandbox = sandbox_api.create_session()["sessionId"]
    stranger = ApiClient(tenant_create(name="Other", actor=SETUP).live_key)
    stranger.create_session()

    assert ids(listed(api)) == [live]
    assert ids(listed(sandbox_api)) == [sandbox]


def test_an_open_session_past_its_expiry_is_listed_expired(api):
    session_id = api.create_session()["sessionId"]
    session_past_expiry(session_id)

    (item,) = listed(api, status="initiated,denied")["data"]

    assert (item["session"]["status"], item["session"]["reason"]) == ("denied", "expired")
    assert listed(api, status="initiated")["data"] == []


@pytest.mark.parametrize(
    "query, field, code",
    [
        ({"status": "done"}, "status", "invalid_value"),
        ({"limit": "0"}, "limit", "out_of_range"),
        ({"limit": "101"}, "limit", "out_of_range"),
        ({"limit": "ten"}, "limit", "out_of_range"),
        ({"created_from": "yesterday"}, "created_from", "invalid_value"),
        ({"created_before": "2026-11-22T10:00:00"}, "created_before", "invalid_value"),  # no time zone
        ({"cursor": "not-a-cursor"}, "cursor", "invalid_value"),
        ({"sort": "asc"}, "sort", "unknown_field"),
    ],
)
def test_bad_list_parameters_are_named_in_a_validation_error(api, query, field, code):
    assert_validation_error(api.get("/v1/sessions?" + urlencode(query)), field, code)


def test_listing_needs_a_key(anonymous_api):
    assert_problem(anonymous_api.get("/v1/sessions"), 401, "missing_api_key")


def test_cancel_ends_an_open_session_as_denied_cancelled_and_sends_the_webhook(api):
    session_id = api.create_session(notification_url="https://partner.example/hooks")["sessionId"]

    response = api.post(f"/v1/sessions/{session_id}/cancel")

    assert response.status_code == 200
    body = response.json()
    assert body == api.get(f"/v1/sessions/{session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("denied", "cancelled")
    assert SessionEvent.objects.filter(session_id=session_id).last().cause == "cancelled by the partner through the API"
    assert WebhookDelivery.objects.filter(subject_ref=session_id).count() == 1
    # Again: the same answer, nothing sent twice.
    assert api.post(f"/v1/sessions/{session_id}/cancel").json() == body
    assert WebhookDelivery.objects.filter(subject_ref=session_id).count() == 1


def test_a_decided_session_cannot_be_cancelled(sandbox_api):
    session_id = sandbox_api.create_session()["sessionId"]
    sandbox_api.post(f"/v1/test/sessions/{session_id}/advance", {"to": "approved"})

    body = assert_problem(sandbox_api.post(f"/v1/sessions/{session_id}/cancel"), 409, "session_final")

    assert "approved" in body["detail"]
    assert sandbox_api.get(f"/v1/sessions/{session_id}").json()["session"]["status"] == "approved"


def test_cancel_sees_only_the_keys_own_sessions(api, sandbox_api):
    live = api.create_session()["sessionId"]

    assert_problem(sandbox_api.post(f"/v1/sessions/{live}/cancel"), 404, "session_not_found")
    assert_problem(api.post("/v1/sessions/ses_01KAAAAAAAAAAAAAAAAAAAAAAA/cancel"), 404, "session_not_found")
    assert api.get(f"/v1/sessions/{live}").json()["session"]["status"] == "initiated"
