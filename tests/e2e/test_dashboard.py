"""The tenant dashboard in a real browser: sign in, generate a key, copy it, use it on the API, then revoke it.

Screenshots of the home and sessions pages go to test-artifacts/ (dashboard-*.png).
"""

import re

import pytest
import requests
from playwright.sync_api import expect

from sessions_api.analysis import RETAKE_CAUSE_PREFIX
from sessions_api.decision import MESSAGE_DOCUMENT_EXPIRED, MESSAGE_DOCUMENT_UNREADABLE
from sessions_api.models import SessionEvent, VerificationSession
from sessions_api.state_machine import session_transition
from sessions_api.submission import CAUSE_DOCUMENT_SUBMITTED, document_path_choose
from tenants.services import membership_add
from tests.factories import SETUP, UserFactory, finished_session, session_created_days_ago

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse battery staple"
DESKTOP = {"viewport": {"width": 1360, "height": 900}}
# A month of traffic, so the usage chart and the sessions list have something to show: (days ago, status).
HISTORY = [
    (0, "approved"),
    (0, "initiated"),
    (1, "approved"),
    (1, "denied"),
    (3, "approved"),
    (3, "approved"),
    (6, "denied"),
    (9, "approved"),
    (13, "approved"),
    (17, "denied"),
    (22, "approved"),
    (28, "approved"),
]


@pytest.fixture
def staff(onboarded):
    user = UserFactory(username="alice", email="alice@acme.test")
    membership_add(tenant=onboarded.tenant, user=user, actor=SETUP)
    for days_ago, status in HISTORY:
        session = finished_session(onboarded.tenant, status=status)
        session_created_days_ago(session.pk, days_ago)
    return user


@pytest.fixture
def console(browser, live_base_url):
    """A desktop browser tab that may use the clipboard on the live server's origin."""
    context = browser.new_context(**DESKTOP)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_base_url)
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


def _create_session(base_url, api_key):
    return requests.post(
        f"{base_url}/v1/sessions",
        json={"subject": "e2e-user", "age_limit": 18},
        headers={"X-API-Key": api_key},
        timeout=10,
    )


def test_staff_generate_copy_and_use_a_key_then_revoke_it(console, live_base_url, staff, onboarded, screenshot):
    page = console
    page.goto(f"{live_base_url}/dashboard/")
    expect(page.get_by_role("heading", name="Sign in to your dashboard")).to_be_visible()
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Acme Games")).to_be_visible()
    expect(page.locator("#tenant-id")).to_have_text(onboarded.tenant.id)
    expect(page.locator("#usage-total")).to_have_text(str(len(HISTORY)))
    screenshot(page, "dashboard-home")

    page.get_by_label("Label").fill("e2e backend")
    page.get_by_role("button", name="Generate new key").click()
    expect(page.get_by_role("heading", name="Your new API key")).to_be_visible()
    shown_key = page.locator("#new-api-key").inner_text().strip()
    assert re.fullmatch(r"av_live_[A-Za-z0-9_-]{40}", shown_key)

    page.get_by_role("button", name="Copy API key").click()
    expect(page.get_by_role("button", name="Copy API key")).to_contain_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == shown_key
    screenshot(page, "dashboard-new-key")

    created = _create_session(live_base_url, copied)
    assert created.status_code == 201, created.text
    session_id = created.json()["session"]["sessionId"]

    page.get_by_role("link", name="Sessions").click()
    expect(page.get_by_role("heading", name="Sessions")).to_be_visible()
    expect(page.locator("#sessions-results")).to_contain_text(session_id)
    screenshot(page, "dashboard-sessions")

    page.get_by_role("link", name=session_id).click()
    expect(page.locator("#session-status")).to_contain_text("Initiated")
    expect(page.locator("#history")).to_contain_text("POST /v1/sessions")

    page.get_by_role("link", name="Home").click()
    key_row = page.locator("#active-keys tr", has_text="e2e backend")
    key_row.get_by_role("link", name="Revoke").click()
    page.get_by_role("button", name="Revoke key").click()
    expect(page.locator(".messagelist")).to_contain_text("is revoked")
    assert _create_session(live_base_url, copied).status_code == 401


def _document_attempt(session_id: str, *, to: str, message: str = "", reason: str = "") -> None:
    """A document sent from the flow and the analysis' decision on it, through the state machine as they make it."""
    session_transition(
        session_id=session_id, to="processing", expected_from=("requires_doc",), cause=CAUSE_DOCUMENT_SUBMITTED
    )
    session_transition(
        session_id=session_id,
        to=to,
        reason=reason,
        cause=(RETAKE_CAUSE_PREFIX + message) if message else "document analysed",
        expected_from=("processing",),
        count_attempt=True,
        message=message,
    )


def test_a_denied_sessions_page_shows_each_document_attempt_to_the_second(console, live_base_url, staff, onboarded):
    session_id = _create_session(live_base_url, onboarded.live_key).json()["session"]["sessionId"]
    session = VerificationSession.objects.get(pk=session_id)
    document_path_choose(session=session)  # no camera: straight to the document step
    _document_attempt(session_id, to="requires_doc", message=MESSAGE_DOCUMENT_UNREADABLE)
    _document_attempt(session_id, to="requires_doc", message=MESSAGE_DOCUMENT_EXPIRED)
    _document_attempt(session_id, to="denied", reason="document_invalid")
    events = list(SessionEvent.objects.filter(session_id=session_id, to_status__in=("processing", "requires_doc")))

    page = console
    page.set_default_timeout(45_000)  # signing in hashes a password: slow on a loaded machine
    page.goto(f"{live_base_url}/dashboard/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.goto(f"{live_base_url}/dashboard/sessions/{session_id}/")

    document = page.locator(".av-result", has=page.get_by_role("heading", name="Document"))
    expect(document).not_to_contain_text("No result")
    expect(document).to_contain_text("No document was accepted in 3 attempts")
    rows = page.locator("#attempts-table tbody tr")
    expect(rows).to_have_count(3)
    sent = [
        event.created_at for event in events if event.to_status == "processing" and event.from_status == "requires_doc"
    ]
    for index, (outcome, detail) in enumerate(
        [
            ("Asked again", f"{MESSAGE_DOCUMENT_UNREADABLE} Failed check: check digits of the machine-readable lines"),
            ("Asked again", f"{MESSAGE_DOCUMENT_EXPIRED} Failed check: expiry date (the document has expired)"),
            ("Denied: Document invalid", "document analysed"),  # nothing stored says which check failed
        ]
    ):
        cells = rows.nth(index).locator("th, td")
        expect(cells.nth(0)).to_have_text(f"Document {index + 1}")
        expect(cells.nth(1)).to_have_text(f"{sent[index]:%b} {sent[index].day}, {sent[index]:%Y %H:%M:%S} UTC")
        expect(cells.nth(2)).to_have_text(outcome)
        expect(cells.nth(3)).to_have_text(re.compile(r"^\w{3} \d{1,2}, \d{4} \d\d:\d\d:\d\d UTC$"))
        expect(cells.nth(4)).to_have_text(detail)
    # The history is to the second as well.
    expect(page.locator("#history .av-muted").last).to_have_text(re.compile(r"\d\d:\d\d:\d\d UTC · document analysed$"))
