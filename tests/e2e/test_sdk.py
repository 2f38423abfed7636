"""SDK mode in Chromium across two sites: the service on localhost, a partner page on 127.0.0.1.

The partner page loads the SDK from the service under a strict CSP and calls it with a publishable
key and the clientSecret its backend got from POST /v1/sessions; its backend then confirms the
result with GET /v1/sessions/{id}, as the docs tell partners to.
"""
import time

import pytest
from playwright.sync_api import expect

from tenants.services import publishable_key_generate
from tests.support.partner_site import partner_site

pytestmark = pytest.mark.e2e

FRAME = "iframe[title='Age verification']"


@pytest.fixture
def site(live_base_url):
    with partner_site(live_base_url) as site:
        yield site


@pytest.fixture
def test_pk(onboarded, site):
    return publishable_key_generate(tenant=onboarded.tenant, mode="test", label="shop",
                                    allowed_origins=[site.origin]).key


@pytest.fixture
def desktop(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


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


def test_modal_flow_completes_in_the_sandbox_and_the_partner_get_agrees(site, test_pk, partner, desktop):
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
    # No secret in any address the partner's server or the service saw.
    assert not any(created["clientSecret"].split("_secret_")[1] in path for path in site.requests)


def test_a_page_on_an_origin_not_allowed_gets_origin_not_allowed_before_anything_is_drawn(
        onboarded, site, partner, desktop):
    key = publishable_key_generate(tenant=onboarded.tenant, mode="test", allowed_origins=["https://shop.example"]).key
    created = partner.create_session()
    desktop.goto(site.origin + "/")
    start(desktop, key, clientSecret=created["clientSecret"])

    wait_for_log(desktop, lambda log: log["errors"])
    assert partner_log(desktop)["errors"] == ["origin_not_allowed"]
    assert "started" not in partner_log(desktop)["events"]
    expect(desktop.locator(FRAME)).to_have_count(0)
    expect(desktop.get_by_role("dialog")).to_have_count(0)
