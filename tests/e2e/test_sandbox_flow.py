"""The hosted flow in a real browser: a sandbox session approved, one cancelled, one through the document step.

Each ends with the partner's GET /v1/sessions/{id}, as a partner's backend would confirm the result.
Screenshots of every page go to test-artifacts/.
"""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def return_urls(base_url: str) -> dict:
    # /healthz answers 200, so the browser lands on a real page when it goes back to the "partner".
    return {"callback_url": f"{base_url}/healthz?partner=callback", "cancel_url": f"{base_url}/healthz?partner=cancel"}


def test_sandbox_session_is_approved_in_the_browser_and_returns_to_the_callback(
    partner, live_base_url, page, screenshot, age_policy_file
):
    age_policy_file({18: 28.0})  # a sandbox approval reads two years over the policy's threshold
    created = partner.create_session(**return_urls(live_base_url))

    page.goto(created["verificationUrl"])
    expect(page).to_have_url(f"{live_base_url}/flow/")
    expect(page.get_by_role("heading", name="Confirm your age")).to_be_visible()
    screenshot(page, "flow-01-consent-sandbox")
    page.get_by_role("link", name="I agree, continue").click()

    expect(page.get_by_role("heading", name="Test mode: choose the outcome")).to_be_visible()
    screenshot(page, "flow-02-sandbox-outcomes")
    page.get_by_role("button", name="Approve (age estimation)").click()

    expect(page.get_by_role("heading", name="Age confirmed")).to_be_visible()
    screenshot(page, "flow-03-result-approved")
    # The partner's callback learns which session came back (and confirms it by GET).
    page.wait_for_url(re.compile(rf"/healthz\?partner=callback&session_id={created['sessionId']}$"), timeout=10_000)

    body = partner.get_session(created["sessionId"])
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "age_estimation")
    assert body["ageEstimation"]["estimatedAge"] == 30.0 and body["liveness"]["isLive"] is True


def test_cancel_finalizes_the_session_and_returns_to_the_cancel_url(partner, live_base_url, page):
    created = partner.create_session(**return_urls(live_base_url))
    page.goto(created["verificationUrl"])

    cancel = page.get_by_role("button", name="Cancel verification")
    cancel.focus()
    page.keyboard.press("Enter")  # keyboard only

    page.wait_for_url(re.compile(rf"/healthz\?partner=cancel&session_id={created['sessionId']}$"))
    body = partner.get_session(created["sessionId"])
    assert (body["session"]["status"], body["session"]["reason"]) == ("denied", "cancelled")


def test_progress_page_follows_the_api_to_the_document_step_then_approves(partner, live_base_url, page, screenshot):
    created = partner.create_session(**return_urls(live_base_url))
    page.goto(created["verificationUrl"])
    page.get_by_role("link", name="I agree, continue").click()

    page.get_by_role("button", name="Stay in processing").click()
    expect(page.get_by_role("heading", name="Checking your pictures")).to_be_visible()
    screenshot(page, "flow-04-progress")
    assert partner.advance(created["sessionId"], "requires_doc").status_code == 200

    # The page polls /flow/status and moves on by itself.
    expect(page.get_by_role("button", name="Approve (document)")).to_be_visible(timeout=10_000)
    page.get_by_role("button", name="Approve (document)").click()
    expect(page.get_by_role("heading", name="Age confirmed")).to_be_visible()

    body = partner.get_session(created["sessionId"])
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["validateDoc"]["trueAge"] == 25


def test_live_session_pages_with_a_camera_and_the_document_fallback(live_partner, live_base_url, page, screenshot):
    created = live_partner.create_session(**return_urls(live_base_url))
    page.goto(created["verificationUrl"])
    page.get_by_role("link", name="I agree, continue").click()

    expect(page.get_by_role("heading", name="Take a selfie")).to_be_visible()
    page.get_by_role("button", name="Turn on the camera").click()
    expect(page.get_by_role("button", name="Start")).to_be_visible()
    page.wait_for_function("document.querySelector('[data-video]').videoWidth > 0")
    screenshot(page, "flow-05-selfie-camera")

    page.get_by_role("button", name="Use an ID document instead").click()
    expect(page.get_by_role("heading", name="Photograph your ID document")).to_be_visible()
    screenshot(page, "flow-06-document")
    assert live_partner.get_session(created["sessionId"])["session"]["status"] == "requires_doc"


def test_a_broken_link_shows_a_friendly_page(partner, live_base_url, page, screenshot):
    created = partner.create_session()

    response = page.goto(created["verificationUrl"].replace("signature=", "signature=x"))

    assert response.status == 403
    expect(page.get_by_role("heading", name="This link is not valid")).to_be_visible()
    screenshot(page, "flow-07-error-link")


def test_camera_capture_sends_every_step_and_a_face_less_picture_is_asked_again(
    live_partner, live_base_url, page, screenshot, celery_worker
):
    created = live_partner.create_session()
    page.clock.install()  # the instructions' pauses are fast-forwarded below
    page.goto(created["verificationUrl"])
    page.get_by_role("link", name="I agree, continue").click()
    page.get_by_role("button", name="Turn on the camera").click()
    page.get_by_role("button", name="Start").click()

    retake = page.get_by_text("Please try again.")
    for _ in range(200):  # at most 100 s of page time
        if retake.is_visible():
            break
        page.clock.run_for(500)
        page.wait_for_timeout(50)
    # Chromium's fake camera shows a test pattern, not a face: the checks ask for another attempt.
    expect(retake).to_be_visible()
    expect(page.get_by_text("Attempt 2 of 3")).to_be_visible()
    screenshot(page, "flow-08-selfie-retake")
    session = live_partner.get_session(created["sessionId"])["session"]
    assert session["status"] == "initiated"
