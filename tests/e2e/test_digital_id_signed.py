"""Signed wallet requests in Debian's Chromium: what the page hands the Digital Credentials API, a wallet verifies.

The page's `navigator.credentials.get` argument is captured as Chromium passes it on; the wallet-side npm
libraries (tests/support/wallet_node) verify it against the reader CA root for the page's own origin;
Chromium's virtual wallet then answers the signed OpenID4VP variant.
"""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from checks.digital_id.request import PROTOCOL_ANNEX_C
from checks.digital_id.sandbox_wallet import wallet_present
from checks.digital_id.signed_request import PROTOCOL_OPENID4VP_SIGNED
from checks.digital_id.trust import EU_AGE_ATTESTATION
from tenants.models import Tenant
from tests.support.reader_ca import reader_configure
from tests.support.wallet_libraries import wallet_check_request

pytestmark = pytest.mark.e2e

# Keeps a copy of what the page asks the browser for, then lets the call go on to Chromium's own API.
CAPTURE = """
const original = navigator.credentials.get.bind(navigator.credentials);
navigator.credentials.get = (options) => {
  window.__askedWallet = JSON.parse(JSON.stringify(options.digital));
  return original(options);
};
"""


def test_the_browser_carries_a_request_the_wallet_verifies_and_its_signed_answer_approves(
    live_partner, live_base_url, page, wallet_ready, onboarded, settings, tmp_path
):
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_unsigned_requests=False)
    reader_ca = reader_configure(settings, tmp_path)
    page.add_init_script(CAPTURE)
    created = live_partner.create_session(subject="signed-wallet-user", age_limit=18)
    page.goto(created["verificationUrl"])
    expect(page.locator("[data-digital-id][data-ready=true]")).to_be_attached()

    page.context.new_cdp_session(page).send("DigitalCredentials.setVirtualWalletBehavior", {"action": "decline"})
    page.get_by_role("button", name="Use a digital ID").click()
    expect(page.get_by_text("No digital ID was shared")).to_be_visible()
    asked = page.evaluate("window.__askedWallet")
    origin = page.evaluate("location.origin")
    assert [item["protocol"] for item in asked["requests"]] == [PROTOCOL_OPENID4VP_SIGNED, PROTOCOL_ANNEX_C]

    seen = wallet_check_request(asked, origin=origin, roots=[reader_ca.root_pem()])
    assert seen[PROTOCOL_OPENID4VP_SIGNED][0]["verified"], seen
    assert seen[PROTOCOL_ANNEX_C][0]["verified"], seen

    # A fresh page and request; the wallet answers its signed OpenID4VP variant.
    cdp = page.context.new_cdp_session(page)
    with page.expect_response("**/flow/digital-id/request") as prepared:
        page.reload()
    expect(page.locator("[data-digital-id][data-ready=true]")).to_be_attached()
    data = wallet_present(
        prepared.value.json()["digital"],
        issuer=wallet_ready,
        protocol=PROTOCOL_OPENID4VP_SIGNED,
        origin=origin,
        doc_type=EU_AGE_ATTESTATION,
        elements={"age_over_18": True},
        now=timezone.now(),
    )
    cdp.send(
        "DigitalCredentials.setVirtualWalletBehavior",
        {"action": "respond", "protocol": PROTOCOL_OPENID4VP_SIGNED, "response": data},
    )
    page.get_by_role("button", name="Use a digital ID").click()
    expect(page.get_by_role("heading", name="Age confirmed")).to_be_visible()
    body = live_partner.get_session(created["sessionId"])
    assert (body["session"]["reason"], body["ageCredential"]["claim"]) == ("digital_id", "age_over_18")
