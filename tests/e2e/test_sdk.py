"""SDK mode in Chromium across two sites: the service on localhost, a partner page on 127.0.0.1.

The partner page loads the SDK from the service under a strict CSP and calls it with a publishable
key and the clientSecret its backend got from POST /v1/sessions; its backend then confirms the
result with GET /v1/sessions/{id}, as the docs tell partners to.
"""

import datetime
import json
import logging
import re
import time

import pytest
import requests
from django.utils import timezone
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from sessions_api.models import VerificationSession
from tenants.models import Tenant
from tenants.services import publishable_key_generate
from tests.e2e.test_live_flow import ANALYSIS_TIMEOUT_MS, document_photo, upload_document, years_ago
from tests.factories import SETUP
from tests.support.partner_site import partner_site

pytestmark = pytest.mark.e2e

FRAME = "iframe[title='Age verification']"


@pytest.fixture
def site(live_base_url):
    with partner_site(live_base_url) as site:
        yield site


@pytest.fixture
def test_pk(onboarded, site):
    return publishable_key_generate(
        tenant=onboarded.tenant, mode="test", label="shop", allowed_origins=[site.origin], actor=SETUP
    ).key


@pytest.fixture
def live_pk(onboarded, site):
    return publishable_key_generate(
        tenant=onboarded.tenant, mode="live", allowed_origins=[site.origin], actor=SETUP
    ).key


@pytest.fixture
def desktop(browser):
    """A desktop page; every address it requests (frames and popups included) and every Referer it sends is kept."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    context.set_default_timeout(15_000)
    sent = []
    context.on("request", lambda request: sent.append((request.url, request.headers.get("referer", ""))))
    page = context.new_page()
    page.sent = sent
    yield page
    context.close()


def assert_secret_nowhere(page, created, caplog):
    """The flow token (the secret half of clientSecret) is in no URL, no Referer and no log line."""
    token = created["sessionToken"]
    assert page.sent, "no request was recorded"
    assert not [entry for entry in page.sent if token in entry[0] or token in entry[1]]
    assert not [record for record in caplog.records if token in record.getMessage()]


def partner_log(page) -> dict:
    return page.evaluate("window.partnerLog")


def wait_for_log(page, predicate, timeout: float = 15.0) -> dict:
    """Poll the partner's log from Python: wait_for_function would need eval, which the page's CSP forbids."""
    deadline = time.monotonic() + timeout
    while True:
        log = partner_log(page)
        if predicate(log) or time.monotonic() > deadline:
            return log
        page.wait_for_timeout(100)


def start(page, key, **options):
    mount = options.pop("mount", None)
    page.evaluate("([key, options, mount]) => window.partnerStart(key, options, mount)", [key, options, mount])


def test_modal_flow_completes_in_the_sandbox_and_the_partner_get_agrees(site, test_pk, partner, desktop, caplog):
    caplog.set_level(logging.DEBUG)
    created = partner.create_session(subject="user-7", age_limit=18)
    desktop.goto(site.origin + "/")
    start(desktop, test_pk, clientSecret=created["clientSecret"])

    dialog = desktop.get_by_role("dialog", name="Age verification")
    expect(dialog).to_be_visible()
    frame = desktop.frame_locator(FRAME)
    frame.get_by_role("link", name="I agree, continue").click()
    frame.get_by_role("button", name="Approve (age estimation)").click()

    log = wait_for_log(desktop, lambda log: log["completed"])
    assert log["completed"] == {"sessionId": created["sessionId"], "status": "approved", "reason": "age_estimation"}
    assert ["ready", "started", "step", "complete"] == [e for e in dict.fromkeys(log["events"])][:4]
    assert log["errors"] == [] and log["violations"] == []
    expect(dialog).to_have_count(0)  # closed by the SDK on completion
    assert partner.get_session(created["sessionId"])["session"]["status"] == "approved"
    assert_secret_nowhere(desktop, created, caplog)


def test_a_page_on_an_origin_not_allowed_gets_origin_not_allowed_before_anything_is_drawn(
    onboarded, site, partner, desktop
):
    key = publishable_key_generate(
        tenant=onboarded.tenant, mode="test", allowed_origins=["https://shop.example"], actor=SETUP
    ).key
    created = partner.create_session()
    desktop.goto(site.origin + "/")
    start(desktop, key, clientSecret=created["clientSecret"])

    wait_for_log(desktop, lambda log: log["errors"])
    assert partner_log(desktop)["errors"] == ["origin_not_allowed"]
    assert "started" not in partner_log(desktop)["events"]
    expect(desktop.locator(FRAME)).to_have_count(0)
    expect(desktop.get_by_role("dialog")).to_have_count(0)


def test_inline_flow_completes_with_the_camera_in_the_frame_and_a_document(
    site, live_pk, live_partner, desktop, celery_worker
):
    # The frame is what this tests: the document alone decides here (the tenant's presence policy is off;
    # the head turns that policy adds are tested in tests/e2e/test_document_presence.py).
    Tenant.objects.update(document_presence_required=False)
    created = live_partner.create_session(subject="adult-1", age_limit=18)
    desktop.goto(site.origin + "/")
    start(desktop, live_pk, clientSecret=created["clientSecret"], mount="#inline")

    frame = desktop.frame_locator("#inline iframe")
    frame.get_by_role("link", name="I agree, continue").click()
    frame.get_by_role("button", name="Turn on the camera").click()  # Chromium's fake camera, inside the frame
    expect(frame.get_by_role("button", name="Start")).to_be_visible(timeout=30_000)  # a loaded machine is slow
    assert wait_for_log(desktop, lambda log: "camera" in log["events"], timeout=30)["errors"] == []
    frame.get_by_role("button", name="Use an ID document instead").click()
    upload_document(frame, document_photo(years_ago(30)))

    log = wait_for_log(desktop, lambda log: log["completed"], timeout=ANALYSIS_TIMEOUT_MS / 1000)
    assert log["completed"] == {"sessionId": created["sessionId"], "status": "approved", "reason": "document"}
    body = live_partner.get_session(created["sessionId"])
    assert (body["session"]["status"], body["validateDoc"]["trueAge"]) == ("approved", 30)
    assert log["violations"] == []


def test_a_forged_message_from_another_frame_or_the_page_is_ignored(site, test_pk, partner, desktop):
    # Another frame of the service's origin (a second frame document for the same key), not the SDK's own.
    other_url = f"{site.service_origin}/flow/embed?key={test_pk}&origin={site.origin}&channel=frame"
    url = site.add_page("/forged", f'<iframe src="{other_url}" title="Other frame"></iframe>')
    created = partner.create_session()
    desktop.goto(url)
    start(desktop, test_pk, clientSecret=created["clientSecret"])
    frame = desktop.frame_locator(FRAME)
    frame.get_by_role("link", name="I agree, continue").click()

    forged = (
        "parent.postMessage({protocol: 'ageverify', version: 1, type: 'complete', "
        "data: {sessionId: 'ses_forged', status: 'approved', reason: 'age_estimation'}}, '*')"
    )
    other = next(f for f in desktop.frames if f.url == other_url)
    other.evaluate(forged)  # the service's origin, but not the SDK's frame
    desktop.evaluate(forged.replace("parent.", "window."))  # the partner page itself
    # A marker after each, from the same window: once both arrived, the forged messages were handled.
    other.evaluate("parent.postMessage('partner-test-marker', '*')")
    desktop.evaluate("window.postMessage('partner-test-marker', '*')")
    log = wait_for_log(desktop, lambda log: log["markers"] == 2)
    assert log["markers"] == 2 and log["completed"] is None

    frame.get_by_role("button", name="Deny (liveness failed)").click()
    log = wait_for_log(desktop, lambda log: log["completed"])
    assert log["completed"]["sessionId"] == created["sessionId"] and log["completed"]["status"] == "denied"


def _without_cookies(route):
    """The frame's storage is blocked: its answers reach it without their cookies (popups are left alone)."""
    request = route.request
    try:
        in_frame = request.frame.parent_frame is not None
    except PlaywrightError:  # a navigation whose frame does not exist yet: the frame document or the popup's
        in_frame = "channel=frame" in request.url
    if not in_frame:
        route.continue_()
        return
    answer = requests.request(
        request.method,
        request.url,
        data=request.post_data_buffer,
        allow_redirects=False,
        headers={k: v for k, v in request.headers.items() if k.lower() != "cookie"},
        timeout=10,
    )
    headers = {
        k: v
        for k, v in answer.headers.items()
        if k.lower() not in ("set-cookie", "content-encoding", "transfer-encoding", "content-length")
    }
    route.fulfill(status=answer.status_code, headers=headers, body=answer.content)


def test_with_the_frames_storage_blocked_the_popup_fallback_completes(site, test_pk, partner, desktop):
    desktop.context.route(re.compile(re.escape(site.service_origin) + "/flow/.*"), _without_cookies)
    created = partner.create_session()
    desktop.goto(site.origin + "/")
    start(desktop, test_pk, clientSecret=created["clientSecret"])

    button = desktop.get_by_role("button", name="Continue the age verification in a new window")
    with desktop.expect_popup() as opened:
        button.click()
    popup = opened.value
    popup.get_by_role("link", name="I agree, continue").click()
    popup.get_by_role("button", name="Approve (age estimation)").click()

    log = wait_for_log(desktop, lambda log: log["completed"])
    assert log["completed"]["status"] == "approved" and "storage_blocked" not in log["errors"]
    assert partner.get_session(created["sessionId"])["session"]["status"] == "approved"
    deadline = time.monotonic() + 10
    while not popup.is_closed():  # the SDK closes its window
        assert time.monotonic() < deadline, "the popup was left open"
        desktop.wait_for_timeout(100)


def test_with_the_frames_storage_and_popups_blocked_the_page_itself_goes_to_the_flow_and_back(
    onboarded, site, partner, desktop
):
    back = site.add_page("/verified", "<p>Back at the shop</p>")
    key = publishable_key_generate(
        tenant=onboarded.tenant, mode="test", allowed_origins=[site.origin], return_urls=[back], actor=SETUP
    ).key
    desktop.context.route(re.compile(re.escape(site.service_origin) + "/flow/.*"), _without_cookies)
    desktop.add_init_script("window.open = function () { return null; };")  # a popup blocker
    created = partner.create_session()
    desktop.goto(site.origin + "/")
    start(desktop, key, clientSecret=created["clientSecret"], returnUrl=back)

    desktop.get_by_role("button", name="Continue the age verification in a new window").click()
    # No window opened: the page itself goes to the flow (a one-time launch code), first-party.
    desktop.get_by_role("link", name="I agree, continue").click()
    desktop.get_by_role("button", name="Approve (age estimation)").click()

    desktop.wait_for_url(f"{back}?session_id={created['sessionId']}&status=approved")
    expect(desktop.get_by_text("Back at the shop")).to_be_visible()
    assert partner.get_session(created["sessionId"])["session"]["status"] == "approved"
    assert not [url for url, _ in desktop.sent if "clientSecret" in url or created["sessionToken"] in url]


def test_the_sdks_own_words_on_the_partners_page_follow_the_locale(site, test_pk, partner, desktop):
    desktop.context.route(re.compile(re.escape(site.service_origin) + "/flow/.*"), _without_cookies)
    created = partner.create_session()
    desktop.goto(site.origin + "/")
    start(desktop, test_pk, clientSecret=created["clientSecret"], locale="de")

    dialog = desktop.get_by_role("dialog", name="Altersverifizierung")
    expect(dialog.get_by_role("button", name="Altersverifizierung in einem neuen Fenster fortsetzen")).to_be_focused()
    expect(dialog.get_by_role("button", name="Altersverifizierung schließen")).to_be_visible()


def test_a_hand_made_iframe_without_allow_camera_yields_camera_blocked(site, live_pk, live_partner, desktop):
    url = site.add_page("/own-frame", '<iframe id="own" title="Our own frame"></iframe>')
    created = live_partner.create_session()
    desktop.goto(url)
    start(desktop, live_pk, clientSecret=created["clientSecret"], mount="#own")
    assert wait_for_log(desktop, lambda log: log["errors"])["errors"] == ["camera_blocked"]


def test_an_expired_client_secret_yields_session_expired_before_anything_is_drawn(site, test_pk, partner, desktop):
    created = partner.create_session()
    VerificationSession.objects.filter(pk=created["sessionId"]).update(
        expires_at=timezone.now() - datetime.timedelta(seconds=1)
    )
    desktop.goto(site.origin + "/")
    start(desktop, test_pk, clientSecret=created["clientSecret"])
    log = wait_for_log(desktop, lambda log: log["errors"])
    assert log["errors"] == ["session_expired"] and "started" not in log["events"]
    expect(desktop.get_by_role("dialog")).to_have_count(0)


def test_the_webview_bridge_receives_the_completion_envelope_and_the_tab_returns_to_the_app(
    onboarded, live_base_url, partner, browser
):
    return_url = f"{live_base_url}/healthz?app=verified"
    key = publishable_key_generate(tenant=onboarded.tenant, mode="test", return_urls=[return_url], actor=SETUP).key
    created = partner.create_session()
    # What the app does: ask for a one-time launch URL with the client secret (no Origin: not a browser page).
    launch = requests.post(
        f"{live_base_url}/v1/client/launch",
        params={"key": key},
        json={"returnUrl": return_url},
        headers={"Authorization": f"Bearer {created['clientSecret']}"},
        timeout=10,
    )
    assert launch.status_code == 201, launch.text

    context = browser.new_context()
    received = []
    context.expose_binding("bridgeReceive", lambda source, message: received.append(message))
    context.add_init_script("window.ReactNativeWebView = { postMessage: (text) => window.bridgeReceive(text) };")
    webview = context.new_page()
    webview.goto(launch.json()["launchUrl"])
    webview.get_by_role("link", name="I agree, continue").click()
    webview.get_by_role("button", name="Approve (age estimation)").click()
    webview.wait_for_url(re.compile(r"/healthz\?app=verified&session_id=ses_\w+&status=approved$"))
    context.close()

    envelopes = [json.loads(text) for text in received]
    assert {
        "protocol": "ageverify",
        "version": 1,
        "type": "complete",
        "data": {"sessionId": created["sessionId"], "status": "approved", "reason": "age_estimation"},
    } in envelopes


def test_the_sdks_locale_reaches_the_flow_in_the_frame(site, test_pk, partner, desktop):
    created = partner.create_session()
    desktop.goto(site.origin + "/")
    start(desktop, test_pk, clientSecret=created["clientSecret"], locale="de")
    frame = desktop.frame_locator("iframe[title='Altersverifizierung']")  # the SDK's own words follow it too
    expect(frame.get_by_role("heading", name="Bestätigen Sie Ihr Alter")).to_be_visible()
    frame.get_by_role("link", name="Ich stimme zu, weiter").click()  # the language cookie works in the frame too
    expect(frame.get_by_role("heading", name="Test mode: choose the outcome")).to_have_count(0)


def test_the_modal_locks_scrolling_traps_focus_and_closes_on_escape(site, test_pk, partner, desktop):
    created = partner.create_session()
    desktop.goto(site.origin + "/")
    start(desktop, test_pk, clientSecret=created["clientSecret"])
    expect(desktop.frame_locator(FRAME).get_by_role("link", name="I agree, continue")).to_be_visible()
    assert desktop.evaluate("document.documentElement.style.overflow") == "hidden"

    close = desktop.get_by_role("button", name="Close the age verification")
    close.focus()
    desktop.keyboard.press("Tab")
    assert desktop.evaluate("document.activeElement.tagName") == "IFRAME"  # focus stays in the dialog
    close.focus()
    desktop.keyboard.press("Shift+Tab")
    assert desktop.evaluate("document.activeElement.tagName") == "IFRAME"
    close.focus()
    desktop.keyboard.press("Escape")

    expect(desktop.get_by_role("dialog")).to_have_count(0)
    log = wait_for_log(desktop, lambda log: "close" in log["events"])
    assert "close" in log["events"] and log["completed"] is None
    assert desktop.evaluate("document.documentElement.style.overflow") == ""


def test_a_key_with_client_sessions_creates_the_session_from_the_page(onboarded, site, partner, desktop):
    key = publishable_key_generate(
        tenant=onboarded.tenant,
        mode="test",
        allowed_origins=[site.origin],
        client_sessions_enabled=True,
        client_age_limit=16,
        actor=SETUP,
    ).key
    desktop.goto(site.origin + "/")
    start(desktop, key, session={"subject": "shopper-5"})
    frame = desktop.frame_locator(FRAME)
    frame.get_by_role("link", name="I agree, continue").click()
    frame.get_by_role("button", name="Approve (age estimation)").click()

    completed = wait_for_log(desktop, lambda log: log["completed"])["completed"]
    # What the partner's backend must check before trusting a session made from a browser:
    session = partner.get_session(completed["sessionId"])["session"]
    assert (session["subject"], session["ageLimit"], session["mode"], session["status"]) == (
        "shopper-5",
        16,
        "test",
        "approved",
    )


def _overlap(one: dict, other: dict) -> bool:
    return not (
        one["x"] + one["width"] <= other["x"]
        or other["x"] + other["width"] <= one["x"]
        or one["y"] + one["height"] <= other["y"]
        or other["y"] + other["height"] <= one["y"]
    )


@pytest.mark.parametrize("width", [390, 1100])
def test_the_modals_close_button_leaves_the_test_mode_badge_visible(site, test_pk, partner, browser, width):
    context = browser.new_context(viewport={"width": width, "height": 844})
    context.set_default_timeout(15_000)
    page = context.new_page()
    created = partner.create_session()
    page.goto(site.origin + "/")
    start(page, test_pk, clientSecret=created["clientSecret"])
    badge = page.frame_locator(FRAME).locator("header.topbar .badge")
    expect(badge).to_be_visible()

    # Both boxes are in the partner page's coordinates (the frame's content is placed where the frame is).
    badge_box = badge.bounding_box()
    close_box = page.get_by_role("button", name="Close the age verification").bounding_box()

    assert not _overlap(badge_box, close_box), (badge_box, close_box)
    context.close()
