""" "Use a digital ID" in Debian's Chromium, answered by the browser's own virtual wallet (DevTools protocol).

`DigitalCredentials.setVirtualWalletBehavior` makes Chromium's Digital Credentials API answer the
page's `navigator.credentials.get` with what the test gives it (or decline). The test plays the
wallet: it reads the request the page prepared, mints an EU age attestation with its own test
issuer bound to that request and to the page's origin, and hands it to the virtual wallet.
"""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from checks.digital_id.request import PROTOCOL_OPENID4VP
from checks.digital_id.sandbox_wallet import wallet_present
from checks.digital_id.trust import EU_AGE_ATTESTATION
from sessions_api.models import VerificationSession
from tenants.models import Tenant

pytestmark = pytest.mark.e2e


def _open(page, created) -> dict:
    """Open the flow; the digital-ID request the page prepares on load, as the wallet will receive it."""
    with page.expect_response("**/flow/digital-id/request") as prepared:
        page.goto(created["verificationUrl"])
    expect(page.locator("[data-digital-id][data-ready=true]")).to_be_attached()
    return prepared.value.json()


def _virtual_wallet(page, **behaviour):
    page.context.new_cdp_session(page).send("DigitalCredentials.setVirtualWalletBehavior", behaviour)


def test_a_wallet_answer_approves_and_a_decline_costs_nothing(
    live_partner, live_base_url, page, screenshot, wallet_ready
):
    created = live_partner.create_session(subject="wallet-user", age_limit=18)
    asked = _open(page, created)
    button = page.get_by_role("button", name="Use a digital ID")
    expect(button).to_be_visible()
    screenshot(page, "flow-digital-id-offered")

    _virtual_wallet(page, action="decline")
    button.click()
    expect(page.get_by_text("No digital ID was shared")).to_be_visible()
    session = VerificationSession.objects.get(pk=created["sessionId"])
    assert (session.status, session.digital_id_attempts) == ("initiated", 0)

    data = wallet_present(
        asked["digital"],
        issuer=wallet_ready,
        protocol=PROTOCOL_OPENID4VP,
        origin=live_base_url,
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": True},
        now=timezone.now(),
    )
    _virtual_wallet(page, action="respond", protocol=PROTOCOL_OPENID4VP, response=data)
    button.click()
    expect(page.get_by_role("heading", name="Age confirmed")).to_be_visible()
    screenshot(page, "flow-digital-id-approved")

    body = live_partner.get_session(created["sessionId"])
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "digital_id")
    assert body["validateDoc"] is None
    assert (body["ageCredential"]["claim"], body["ageCredential"]["value"]) == ("age_over_18", True)


def test_an_answer_made_for_another_page_is_refused_with_a_plain_message(
    live_partner, live_base_url, page, wallet_ready
):
    created = live_partner.create_session(subject="relay", age_limit=18)
    asked = _open(page, created)
    relayed = wallet_present(
        asked["digital"],
        issuer=wallet_ready,
        protocol=PROTOCOL_OPENID4VP,
        origin="https://phish.example",
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": True},
        now=timezone.now(),
    )
    _virtual_wallet(page, action="respond", protocol=PROTOCOL_OPENID4VP, response=relayed)
    button = page.get_by_role("button", name="Use a digital ID")
    button.click()
    expect(page.get_by_text("We could not verify this digital ID")).to_be_visible()
    expect(button).to_be_enabled()  # a fresh request is prepared: the user may try again
    session = VerificationSession.objects.get(pk=created["sessionId"])
    assert (session.status, session.digital_id_attempts) == ("initiated", 1)


def test_the_sandbox_test_wallet_approves_without_a_wallet(partner, live_base_url, page, onboarded):
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True, digital_id_unsigned_requests=True)
    created = partner.create_session(subject="tester", age_limit=18)
    page.goto(created["verificationUrl"])
    page.get_by_role("link", name="I agree, continue").click()
    expect(page.locator("[data-digital-id][data-ready=true]")).to_be_attached()
    page.get_by_role("button", name="Test wallet: over 18").click()
    expect(page.get_by_role("heading", name="Age confirmed")).to_be_visible()
    body = partner.get_session(created["sessionId"])
    assert (body["session"]["reason"], body["ageCredential"]["issuer"]["trustSource"]) == ("digital_id", "sandbox")


def test_a_browser_without_the_digital_credentials_api_is_not_offered_the_step(live_partner, page, wallet_ready):
    page.add_init_script("delete window.DigitalCredential;")
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    created = live_partner.create_session(subject="old-browser", age_limit=18)
    page.goto(created["verificationUrl"])
    expect(page.get_by_role("link", name="I agree, continue")).to_be_visible()
    expect(page.locator("[data-digital-id]")).to_be_hidden()
    assert not [url for url in requests if "digital-id" in url]  # no request is even prepared
