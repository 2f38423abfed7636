"""The sessions list (filters, search, pagination) and a session's detail page (results, history, webhook)."""

import html
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import delivery_with_attempt, finished_session, session_created_days_ago, session_past_expiry


def _listed_ids(response) -> list[str]:
    results = response.content.decode().split('id="sessions-results"', 1)[1].split("av-pagination-bar", 1)[0]
    return re.findall(r">(ses_[0-9A-Z]{26})<", results)


def _created_days_ago(session, days):
    session_created_days_ago(session.pk, days)


def test_the_list_shows_the_tenants_sessions_newest_first_with_status_badges(dashboard, onboarded):
    older = finished_session(onboarded.tenant, status="denied")
    _created_days_ago(older, 1)
    newer = finished_session(onboarded.tenant, status="approved")

    response = dashboard.get("/dashboard/sessions/")

    assert _listed_ids(response) == [newer.id, older.id]
    page = response.content.decode()
    assert '<span class="av-badge av-badge--approved">Approved</span>' in page
    assert '<span class="av-badge av-badge--denied">Denied</span>' in page


def test_the_list_filters_by_status_mode_and_date_range_and_searches_subjects(dashboard, onboarded):
    approved = finished_session(onboarded.tenant, status="approved", subject="gamer-1")
    denied = finished_session(onboarded.tenant, status="denied", subject="gamer-2")
    sandbox = finished_session(onboarded.tenant, status="approved", mode="test", subject="tester")
    old = finished_session(onboarded.tenant, status="initiated", subject="old-gamer")
    _created_days_ago(old, 10)
    today = timezone.now().date()

    def listed(**query):
        return set(_listed_ids(dashboard.get("/dashboard/sessions/", query)))

    assert listed(status="approved") == {approved.id, sandbox.id}
    assert listed(status="denied") == {denied.id}
    assert listed(mode="test") == {sandbox.id}
    assert listed(status="approved", mode="live") == {approved.id}
    assert listed(**{"from": str(today - timedelta(days=11)), "to": str(today - timedelta(days=9))}) == {old.id}
    assert listed(**{"from": str(today)}) == {approved.id, denied.id, sandbox.id}
    assert listed(q="gamer") == {approved.id, denied.id, old.id}
    assert listed(q=denied.id) == {denied.id}
    assert listed(status="", mode="", q="") == {approved.id, denied.id, sandbox.id, old.id}  # an empty form


def test_bad_filter_values_are_reported_on_the_page_and_not_applied(dashboard, onboarded):
    session = finished_session(onboarded.tenant)

    for query, message in [
        ({"status": "lost"}, "Unknown status 'lost'"),
        ({"from": "yesterday"}, "'yesterday' is not a date"),
        ({"from": "2026-02-02", "to": "2026-01-01"}, "The start date is after the end date"),
    ]:
        response = dashboard.get("/dashboard/sessions/", query)
        assert response.status_code == 200
        assert message in html.unescape(response.content.decode())
        assert _listed_ids(response) == [session.id]


def test_dates_at_the_ends_of_the_calendar_filter_without_an_error(dashboard, onboarded):
    session = finished_session(onboarded.tenant)

    for query in [{"to": "9999-12-31"}, {"from": "0001-01-01", "to": "9999-12-31"}]:
        response = dashboard.get("/dashboard/sessions/", query)
        assert response.status_code == 200
        assert _listed_ids(response) == [session.id]
    assert _listed_ids(dashboard.get("/dashboard/sessions/", {"from": "9999-12-31"})) == []


def test_an_address_the_list_cannot_apply_gets_a_clear_page_not_an_error(dashboard, onboarded):
    finished_session(onboarded.tenant)

    response = dashboard.get("/dashboard/sessions/", {"no_such_field": "1"}, follow=True)

    assert response.status_code == 400
    assert b"These filters cannot be applied" in response.content


def test_the_list_is_paginated_25_to_a_page(dashboard, onboarded):
    sessions = [finished_session(onboarded.tenant, status="initiated") for _ in range(27)]

    first, second = dashboard.get("/dashboard/sessions/"), dashboard.get("/dashboard/sessions/", {"p": 2})

    assert len(_listed_ids(first)) == 25 and len(_listed_ids(second)) == 2
    assert set(_listed_ids(first)) | set(_listed_ids(second)) == {session.id for session in sessions}


def test_the_detail_page_shows_results_history_with_causes_and_webhook_attempts(dashboard, onboarded):
    session, delivery = delivery_with_attempt(onboarded.tenant, status_code=502)

    page = dashboard.get(f"/dashboard/sessions/{session.id}/").content.decode()

    assert 'data-field="estimatedAge">31.5<' in page and 'data-field="ageConfidence">0.87<' in page
    assert 'data-field="isLive">' in page and 'data-field="livenessScore">0.96<' in page
    history = page.split('id="history"', 1)[1].split("</section>", 1)[0]
    assert [cause.strip() for cause in re.findall(r"UTC</time> · ([^<]+)<", history)] == [
        "POST /v1/sessions",
        "selfie submitted",
        "estimated age above the limit",
    ]
    assert "Approved by age estimation" in history
    webhook = page.split('id="webhooks"', 1)[1]
    assert delivery.pk in webhook and ">502<" in webhook and "Re-send" in webhook


def test_opening_an_open_session_past_its_expiry_shows_it_expired(dashboard, onboarded):
    session = finished_session(onboarded.tenant, status="initiated")
    session_past_expiry(session.pk)

    page = dashboard.get(f"/dashboard/sessions/{session.id}/").content.decode()

    assert '<span class="av-badge av-badge--denied">Denied</span>' in page
    assert "session expired" in page


def test_session_pages_are_read_only(dashboard, onboarded):
    session = finished_session(onboarded.tenant)

    assert dashboard.post(f"/dashboard/sessions/{session.id}/").status_code == 405
    assert dashboard.post("/dashboard/sessions/").status_code == 405
    for path in ("add/", f"{session.id}/change/", f"{session.id}/delete/", f"{session.id}/history/"):
        assert dashboard.get(f"/dashboard/sessions/{path}").status_code == 404


@pytest.mark.parametrize("fired", [["virtualCamera", "timing"], ["flash", "passive"]])
def test_the_detail_page_shows_the_liveness_signals_that_fired(dashboard, onboarded, fired):
    from sessions_api.models import LivenessResult

    session = finished_session(onboarded.tenant, status="denied")
    LivenessResult.objects.filter(session=session).update(signals=fired)

    page = dashboard.get(f"/dashboard/sessions/{session.id}/").content.decode()

    signals = page.split('data-field="signals">', 1)[1].split("</dd>", 1)[0]
    assert re.findall(r">(\w+)</span>", signals) == fired


def test_an_age_pass_approval_says_in_words_how_the_pass_was_proved(dashboard, onboarded, sandbox_api):
    session = sandbox_api.create_session(age_limit=18)
    sandbox_api.post(f"/v1/test/sessions/{session['sessionId']}/advance", {"to": "approved", "reason": "age_pass"})

    page = dashboard.get(f"/dashboard/sessions/{session['sessionId']}/").content.decode()

    age_pass = page.split('id="age-pass-result"', 1)[1].split("</dl>", 1)[0]
    assert 'data-field="method">Identity document<' in age_pass


def _document_attempt(session_id: str, decision) -> None:
    """A document sent, and the analysis writing `decision` on it as sessions_api.analysis does."""
    from sessions_api.analysis import RETAKE_CAUSE_PREFIX
    from sessions_api.state_machine import session_transition
    from sessions_api.submission import CAUSE_DOCUMENT_SUBMITTED

    session_transition(
        session_id=session_id, to="processing", expected_from=("requires_doc",), cause=CAUSE_DOCUMENT_SUBMITTED
    )
    session_transition(
        session_id=session_id,
        to=decision.to_status,
        reason=decision.reason,
        cause=RETAKE_CAUSE_PREFIX + decision.retake_message if decision.is_retake else "document analysed",
        expected_from=("processing",),
        results=decision.results,
        count_attempt=True,
        message=decision.retake_message or "",
    )


def _attempt_rows(page: str) -> list[str]:
    table = page.split('id="attempts-table"', 1)[1].split("</table>", 1)[0]
    return [html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row))).strip() for row in table.split("<tr")[2:]]


def test_each_document_attempt_shows_what_was_found_and_what_failed_until_redacted(
    dashboard, onboarded, api, staff_user
):
    from checks.results import DocumentData, HolderMatch, Liveness
    from sessions_api.decision import Presence, decide_document
    from sessions_api.models import VerificationSession
    from sessions_api.retention import session_redact
    from sessions_api.submission import document_path_choose
    from tenants.audit import Actor

    session_id = api.create_session(age_limit=18)["sessionId"]
    document_path_choose(session=VerificationSession.objects.get(pk=session_id))
    today = timezone.now().date()
    passport = DocumentData("mrz_td3", today - timedelta(days=30 * 365), today + timedelta(days=4 * 365), True, None)
    unreadable = DocumentData("mrz_td1", passport.birthdate, None, checks_valid=False, problem="check digit")
    live = Liveness(is_live=True, liveness_score=0.93)
    for attempt, (document, holder) in enumerate(
        [(unreadable, None), (passport, None), (passport, HolderMatch(0.21, False))]
    ):
        decision = decide_document(
            document, age_limit=18, today=today, attempts_so_far=attempt, presence=Presence(live, holder)
        )
        _document_attempt(session_id, decision)

    rows = _attempt_rows(dashboard.get(f"/dashboard/sessions/{session_id}/").content.decode())

    assert len(rows) == 3
    assert "Failed check: check digits of the machine-readable lines" in rows[0]
    assert "Failed check: holder match with the document's photo" in rows[1]
    assert "Denied: Document holder not matched" in rows[2]
    assert "Document: Passport (TD3 machine-readable zone)" in rows[2]
    assert "Machine-readable lines: check digits and printed dates agree" in rows[2]
    assert f"Expiry: valid until {passport.expiry_date:%Y-%m-%d}" in rows[2]
    assert "Holder: live (liveness checked), not matched with the document's photo (score 0.21)" in rows[2]

    session_redact(session_id=session_id, actor=Actor(user=staff_user), cause="redacted in the dashboard")
    redacted = _attempt_rows(dashboard.get(f"/dashboard/sessions/{session_id}/").content.decode())

    assert len(redacted) == 3 and "Denied: Document holder not matched" in redacted[2]
    assert not any(word in " ".join(redacted) for word in ("Failed check", "Passport", "0.21", "Expiry", "Holder:"))
