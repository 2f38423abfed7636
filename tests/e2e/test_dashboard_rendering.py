"""The dashboard renders what it means: no markup in cells, plain messages, counts that make sense,
navigation on a phone and no clipped column on a laptop screen (issue 15's rendering slips)."""

import re

import pytest
from playwright.sync_api import expect

from sessions_api.events import OPTIONAL_EVENTS
from tenants.services import api_key_touch, membership_add, publishable_key_generate
from tests.factories import SETUP, UserFactory, delivery_with_attempt, finished_session

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse battery staple"
ORIGIN = "https://shop.partner-with-a-long-name.example.com"


@pytest.fixture
def staff(onboarded):
    user = UserFactory(username="alice", email="alice@acme.test")
    membership_add(tenant=onboarded.tenant, user=user, actor=SETUP)
    return user


def signed_in(browser, base_url, width, height=900, **options):
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto(f"{base_url}/dashboard/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Acme Games")).to_be_visible()
    return page


def clipped_cells(page, table_selector: str) -> list[str]:
    """Texts of the table's cells whose content does not fit, or that lie outside the visible page width."""
    return page.evaluate(
        """(selector) => {
        const out = [];
        for (const table of document.querySelectorAll(selector)) {
            for (const cell of table.querySelectorAll('th, td')) {
                const box = cell.getBoundingClientRect();
                if (box.width === 0) continue;
                let scroller = cell.parentElement;
                while (scroller && scroller !== document.body && getComputedStyle(scroller).overflowX === 'visible') {
                    scroller = scroller.parentElement;
                }
                const visible = scroller ? scroller.getBoundingClientRect() : {left: 0, right: window.innerWidth};
                const right = Math.min(visible.right, document.documentElement.clientWidth);
                if (cell.scrollWidth > cell.clientWidth + 1 || box.right > right + 1) out.push(cell.innerText.trim());
            }
        }
        return out;
    }""",
        table_selector,
    )


@pytest.mark.parametrize("width", [1280, 1360, 1440])
def test_no_key_or_session_column_is_clipped_on_a_laptop(browser, live_base_url, staff, onboarded, width, screenshot):
    for status in ("approved", "denied", "initiated"):
        finished_session(onboarded.tenant, status=status, subject="a-rather-long-subject-name-of-a-partner-user-0042")
    page = signed_in(browser, live_base_url, width)
    screenshot(page, f"dashboard-home-{width}")
    assert clipped_cells(page, "#active-keys table, table#active-keys") == []
    page.get_by_role("link", name="Sessions").click()
    expect(page.get_by_role("heading", name="Sessions")).to_be_visible()
    screenshot(page, f"dashboard-sessions-{width}")
    assert clipped_cells(page, "#result_list") == []
    page.context.close()


def test_a_phone_has_the_dashboards_navigation(browser, live_base_url, staff, screenshot):
    page = signed_in(browser, live_base_url, 390, 844, device_scale_factor=2, is_mobile=True, has_touch=True)
    screenshot(page, "dashboard-home-phone")

    # Nothing pushes the page sideways (wide tables and code scroll inside their own box).
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    navigation = page.get_by_role("navigation", name="Dashboard")
    for name in ("Home", "Sessions", "Webhooks", "Audit log"):
        expect(navigation.get_by_role("link", name=name)).to_be_visible()
    navigation.get_by_role("link", name="Webhooks").click()
    expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
    page.context.close()


def test_key_rows_messages_and_delivery_counts_read_as_text(browser, live_base_url, staff, onboarded):
    live_key = onboarded.tenant.api_keys.get(mode="live")
    api_key_touch(live_key)
    page = signed_in(browser, live_base_url, 1360)

    last_used = page.locator("#active-keys tr", has_text=live_key.prefix).locator("td").nth(4)
    expect(last_used).to_have_text(re.compile(r"^(just now|\d+ minutes? ago)$"))
    assert re.fullmatch(r"\w{3} \d{1,2}, \d{4} \d\d:\d\d UTC", last_used.locator("span").get_attribute("title"))

    page.locator("#active-keys tr", has_text=live_key.prefix).get_by_role("link", name="Revoke").click()
    page.get_by_role("button", name="Revoke key").click()
    expect(page.locator(".messagelist")).to_contain_text(f"av_live_{live_key.prefix}… is revoked")

    page.get_by_role("link", name="Webhooks").click()
    deliveries = page.get_by_role("region", name="Recent deliveries")
    expect(deliveries).to_contain_text("No events yet")
    expect(deliveries).not_to_contain_text("The last 0 events")
    page.context.close()


def _sideways(page) -> dict:
    """How far the page scrolls sideways, and the elements that stick out past its right edge."""
    return page.evaluate(
        """() => {
        const root = document.documentElement;
        const out = [];
        for (const element of document.body.querySelectorAll('*')) {
            const box = element.getBoundingClientRect();
            if (box.width && box.right > root.clientWidth + 1) {
                out.push(element.tagName.toLowerCase() + (element.id ? '#' + element.id : '') +
                         (element.className && typeof element.className === 'string' ? '.' + element.className : ''));
            }
        }
        return {overflow: root.scrollWidth - root.clientWidth, outside: out.slice(0, 8)};
    }"""
    )


def test_the_webhooks_page_does_not_scroll_sideways_on_a_phone(browser, live_base_url, staff, onboarded, screenshot):
    delivery_with_attempt(onboarded.tenant)  # a delivery row, with its long address
    page = signed_in(browser, live_base_url, 390, 844, device_scale_factor=2, is_mobile=True, has_touch=True)
    page.get_by_role("navigation", name="Dashboard").get_by_role("link", name="Webhooks").click()
    expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()
    page.get_by_label("Default address: live events").fill("https://hooks.partner.example.com/ageverify/webhooks/live")
    page.locator("#webhook-address-live").get_by_role("button", name="Save address").click()
    expect(page.locator(".messagelist")).to_be_visible()
    page.goto(f"{live_base_url}/dashboard/webhooks/")
    page.locator("#signing-secret-live").get_by_role("button", name="Reveal").click()
    expect(page.locator("#webhook-secret")).to_be_visible()
    page.locator(".av-delivery summary .av-badge").first.click()  # a delivery's attempts, opened
    expect(page.locator(".av-delivery[open] table")).to_be_visible()
    screenshot(page, "dashboard-webhooks-phone")

    sideways = _sideways(page)
    assert sideways["overflow"] <= 0, sideways  # scrollWidth <= clientWidth; what sticks out, to find why
    page.context.close()


# Every page a member reaches from the navigation, and the pages one click further (a session, a confirmation).
PHONE_PAGES = {
    "Home": "/dashboard/",
    "Sessions": "/dashboard/sessions/",
    "Session": "/dashboard/sessions/{session}/",
    "Funnel": "/dashboard/funnel/",
    "SDK keys": "/dashboard/sdk/",
    "Webhooks": "/dashboard/webhooks/",
    "Rotate signing secret": "/dashboard/webhooks/secret/rotate/?mode=test",
    "Branding": "/dashboard/branding/",
    "Age passes": "/dashboard/age-passes/",
    "Team": "/dashboard/team/",
    "Audit log": "/dashboard/audit-log/",
}


def test_no_dashboard_page_scrolls_sideways_in_a_390_px_viewport(browser, live_base_url, staff, onboarded):
    from dashboard.services import TEST_EVENTS, dashboard_webhook_test_send
    from tenants.audit import Actor
    from webhooks.services import webhook_endpoint_set, webhook_events_set

    session, _ = delivery_with_attempt(onboarded.tenant)
    publishable_key_generate(
        tenant=onboarded.tenant, mode="live", label="Checkout page", allowed_origins=[ORIGIN], actor=SETUP
    )
    actor = Actor(user=staff, ip_address="203.0.113.7")
    for mode in ("live", "test"):  # long addresses, every optional event: the Webhooks page at its fullest
        address = f"https://hooks.partner-with-a-long-name.example.com/ageverify/webhooks/{mode}/receiver"
        webhook_endpoint_set(tenant=onboarded.tenant, actor=actor, mode=mode, url=address)
        webhook_events_set(tenant=onboarded.tenant, actor=actor, mode=mode, events=list(OPTIONAL_EVENTS))
        for event in TEST_EVENTS:  # a delivery of each event, its name in the list
            dashboard_webhook_test_send(tenant=onboarded.tenant, actor=actor, mode=mode, url=address, event=event)
    # A plain 390x844 viewport: a phone's emulation would zoom a too-wide page out to fit and hide the overflow.
    page = signed_in(browser, live_base_url, 390, 844)

    sideways = {}
    for title, path in PHONE_PAGES.items():
        page.goto(live_base_url + path.format(session=session.pk))
        expect(page).to_have_title(re.compile(f"^{title}"))
        width = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
        if width[0] > width[1] or width[1] != 390:
            sideways[title] = (width, _sideways(page)["outside"])
    # The Webhooks page once more with what its buttons open: a revealed secret, a delivery's attempts.
    page.goto(f"{live_base_url}/dashboard/webhooks/")
    page.locator("#signing-secret-live").get_by_role("button", name="Reveal").click()
    expect(page.locator("#webhook-secret")).to_be_visible()
    page.locator(".av-delivery summary .av-badge").first.click()
    expect(page.locator(".av-delivery[open] table")).to_be_visible()
    if page.evaluate("document.scrollingElement.scrollWidth > window.innerWidth"):
        sideways["Webhooks, opened"] = _sideways(page)["outside"]
    assert sideways == {}
    page.context.close()


@pytest.mark.parametrize("path", ["/dashboard/branding/", "/dashboard/age-passes/"])
def test_every_field_of_a_settings_form_stays_inside_its_cards_padding(browser, live_base_url, staff, path):
    page = signed_in(browser, live_base_url, 1280)
    page.goto(live_base_url + path)

    outside = page.evaluate(
        """() => [...document.querySelectorAll('.av-card input, .av-card select')].filter((field) => {
            const card = field.closest('.av-card'), style = getComputedStyle(card), box = field.getBoundingClientRect();
            const right = card.getBoundingClientRect().right - parseFloat(style.paddingRight);  // its content's edge
            return box.width > 0 && box.right > right + 1;
        }).map((field) => field.name)"""
    )
    assert outside == []
    page.context.close()
