"""A desktop without the Digital Credentials API, and a wallet on a phone: the QR code, answered cross-device.

The phone is tests/support/wallet/wallet.mjs, run by node: `@openid4vc/openid4vp` resolves the link
the page shows (fetches the request URI, checks the signed request object and its x5c chain up to the
reader CA it trusts), `@auth0/mdl` signs the DeviceResponse over the OpenID4VP handover, and the
answer goes back by direct_post.jwt. The service signs with the operator's reader certificate
(`DIGITAL_ID_READER_*`), issued here by a test CA for the live server's host.
"""

import json
import re
from datetime import timedelta

import pytest
import requests
import segno
from django.utils import timezone
from playwright.sync_api import expect

from sessions_api.models import DigitalIdRequest, VerificationSession
from tests.support.accessibility import axe_violations
from tests.support.phone_wallet import phone_wallet_answer
from tests.support.reader_ca import reader_ca_create, reader_configure

pytestmark = pytest.mark.e2e

NO_DC_API = "delete window.DigitalCredential;"


@pytest.fixture
def reader_ca(live_base_url, settings, tmp_path):
    """The reader CA the phone's wallet trusts, and the operator's reader certificate it issued, configured."""
    return reader_configure(settings, tmp_path, ca=reader_ca_create(name="Utopia Reader CA"))


def _qr_shown(page, created) -> str:
    """Open the flow on the desktop; the link its QR code carries (checked against the drawn code)."""
    page.add_init_script(NO_DC_API)
    page.goto(created["verificationUrl"])
    expect(page.locator("[data-digital-id][data-phone-ready=true]")).to_be_attached()
    qr = page.locator("[data-phone-qr] svg")
    expect(qr).to_be_visible()
    link = page.locator("[data-phone-link]").get_attribute("href")
    assert link.startswith("openid4vp://?client_id=x509_san_dns%3A")
    drawn = qr.locator("path.qrline").get_attribute("d")
    assert drawn == re.search(r'class="qrline"[^>]* d="([^"]+)"', segno.make(link, error="m").svg_inline()).group(1)
    return link


def _request_id(link: str) -> str:
    return re.search(r"request%2F(dcr_[\w-]+)", link).group(1)


def test_a_phone_wallet_answers_the_desktop_qr_code_and_the_desktop_finishes_approved(
    live_partner, live_base_url, page, screenshot, wallet_ready, reader_ca, receiver, celery_worker
):
    created = live_partner.create_session(subject="desk-user", age_limit=18, notification_url=receiver.url())
    link = _qr_shown(page, created)
    screenshot(page, "flow-digital-id-phone-qr")

    answered = phone_wallet_answer(link, reader_ca_pem=reader_ca.root_pem(), issuer=wallet_ready)
    assert (answered["stage"], answered.get("status")) == ("answered", 200), answered

    # The desktop follows by polling (every 1.5 s): on a loaded machine a few polls may pass.
    expect(page.get_by_role("heading", name="Age confirmed")).to_be_visible(timeout=20_000)
    screenshot(page, "flow-digital-id-phone-approved")
    body = live_partner.get_session(created["sessionId"])
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "digital_id")
    assert (body["ageCredential"]["claim"], body["ageCredential"]["value"]) == ("age_over_18", True)
    assert body["ageCredential"]["issuer"]["trustSource"] == "pem:utopia"
    hook = json.loads(receiver.wait_for(1)[0].body)
    assert (hook["data"]["sessionId"], hook["data"]["status"]) == (created["sessionId"], "approved")

    # The same answer again, and the request URI again: refused with the OpenID4VP error and our code.
    request_id = _request_id(link)
    replay = requests.post(
        f"{live_base_url}/wallet/openid4vp/response/{request_id}",
        data=answered["form"],
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        timeout=10,
    )
    assert (replay.status_code, replay.json()) == (
        400,
        {"error": "invalid_request", "error_description": "response_replayed"},
    )
    again = requests.get(f"{live_base_url}/wallet/openid4vp/request/{request_id}", timeout=10)
    assert (again.status_code, again.json()["error_description"]) == (400, "request_uri_used")


def test_the_wallet_refuses_a_request_signed_by_a_reader_it_does_not_trust(live_partner, page, wallet_ready, reader_ca):
    created = live_partner.create_session(subject="desk-user", age_limit=18)
    link = _qr_shown(page, created)
    stranger = reader_ca_create(name="Someone else's CA")

    refused = phone_wallet_answer(link, reader_ca_pem=stranger.root_pem(), issuer=wallet_ready)

    assert refused["stage"] == "refused", refused
    assert "verification of jwt" in refused["error"], refused  # the library's own words
    session = VerificationSession.objects.get(pk=created["sessionId"])
    assert (session.status, session.digital_id_attempts) == ("initiated", 0)


def test_an_answer_posted_to_another_sessions_request_is_refused_and_proves_nothing(
    live_partner, browser, page, wallet_ready, reader_ca
):
    mine = live_partner.create_session(subject="desk-a", age_limit=18)
    theirs = live_partner.create_session(subject="desk-b", age_limit=18)
    my_link = _qr_shown(page, mine)
    other_page = browser.new_page()
    try:
        their_link = _qr_shown(other_page, theirs)
        fetched = phone_wallet_answer(
            their_link, reader_ca_pem=reader_ca.root_pem(), issuer=wallet_ready, resolve_only=True
        )
        assert fetched["stage"] == "resolved"
        expect(other_page.get_by_text("Your wallet has the request")).to_be_visible(timeout=20_000)

        their_response_uri = re.sub(r"request%2F", "response%2F", their_link)
        their_response_uri = requests.utils.unquote(re.search(r"request_uri=([^&]+)", their_response_uri).group(1))
        misdirected = phone_wallet_answer(
            my_link, reader_ca_pem=reader_ca.root_pem(), issuer=wallet_ready, post_to=their_response_uri
        )

        assert (misdirected["status"], json.loads(misdirected["body"])) == (
            400,
            {"error": "invalid_request", "error_description": "envelope_not_for_this_request"},
        )
        # The desktop whose code was misused says so, and offers a new code.
        expect(other_page.get_by_text("We could not verify this digital ID")).to_be_visible(timeout=20_000)
        expect(other_page.get_by_role("button", name="Show a new code")).to_be_visible()
    finally:
        other_page.close()
    for session_id, attempts in ((mine["sessionId"], 0), (theirs["sessionId"], 1)):
        session = VerificationSession.objects.get(pk=session_id)
        assert (session.status, session.digital_id_attempts) == ("initiated", attempts)


def test_an_expired_code_is_refused_to_the_wallet_and_the_desktop_offers_a_new_one(
    live_partner, live_base_url, page, wallet_ready, reader_ca
):
    created = live_partner.create_session(subject="slow-user", age_limit=18)
    link = _qr_shown(page, created)
    DigitalIdRequest.objects.filter(pk=_request_id(link)).update(expires_at=timezone.now() - timedelta(seconds=1))

    refused = phone_wallet_answer(link, reader_ca_pem=reader_ca.root_pem(), issuer=wallet_ready)
    assert refused["stage"] == "refused"
    direct = requests.post(f"{live_base_url}/wallet/openid4vp/request/{_request_id(link)}", timeout=10)
    assert (direct.status_code, direct.json()) == (
        400,
        {"error": "invalid_request", "error_description": "request_uri_expired"},
    )

    expect(page.get_by_text("This code can no longer be used")).to_be_visible(timeout=20_000)
    page.get_by_role("button", name="Show a new code").click()
    expect(page.locator("[data-phone-qr] svg")).to_be_visible()
    assert page.locator("[data-phone-link]").get_attribute("href") != link


def test_on_a_phone_the_page_also_links_to_the_wallet_app_on_that_phone(live_partner, browser, wallet_ready, reader_ca):
    created = live_partner.create_session(subject="phone-user", age_limit=18)
    # CSP bypassed only so that axe-core can be injected (the desktop tests run under the page's CSP).
    context = browser.new_context(
        is_mobile=True, has_touch=True, viewport={"width": 390, "height": 844}, bypass_csp=True
    )
    try:
        phone = context.new_page()
        link = _qr_shown(phone, created)
        opener = phone.get_by_role("link", name="Open my wallet app")
        expect(opener).to_be_visible()
        assert opener.get_attribute("href") == link
        assert axe_violations(phone) == []
    finally:
        context.close()


def test_a_browser_with_the_api_offers_the_phone_too_and_the_choice_shows_the_code(
    live_partner, page, wallet_ready, reader_ca
):
    created = live_partner.create_session(subject="choosy", age_limit=18)
    page.goto(created["verificationUrl"])
    expect(page.locator("[data-digital-id][data-ready=true]")).to_be_attached()  # the browser's request is ready
    expect(page.get_by_role("button", name="Use a digital ID")).to_be_visible()
    expect(page.locator("[data-phone-qr] svg")).to_have_count(0)

    page.get_by_role("button", name="Use a wallet on my phone").click()

    expect(page.locator("[data-phone-qr] svg")).to_be_visible()
    expect(page.get_by_role("button", name="Use a digital ID")).to_be_hidden()  # one request per session
    expect(page.get_by_text("Waiting for your wallet…")).to_be_visible()
