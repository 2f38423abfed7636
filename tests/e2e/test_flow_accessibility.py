"""The flow as users of other languages, keyboards and screen readers meet it, with a tenant's branding.

German by the link's `locale`, keyboard only; Arabic by the browser's language, right to left; every
flow page checked with axe-core (WCAG 2.2 A/AA: no violation of serious or critical impact). The
tenant's logo and accent colour are set through tenants.branding, as the dashboard's Branding page does.
"""

import io

import pytest
from PIL import Image
from playwright.sync_api import expect

from tenants.branding import tenant_branding_update
from tenants.models import Tenant
from tests.e2e.conftest import PHONE
from tests.support.accessibility import axe_violations, tab_to

pytestmark = pytest.mark.e2e

ACCENT = "#7a1fa2"
ACCENT_RGB = "rgb(122, 31, 162)"


def _logo_png() -> bytes:
    image = Image.new("RGB", (240, 80), (255, 255, 255))
    image.paste((122, 31, 162), (10, 10, 230, 70))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.fixture
def branded(onboarded):
    """The tenant's branding, and the digital-ID offer on (so that its section is on the pages axe checks)."""
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True, digital_id_unsigned_requests=True)
    tenant_branding_update(
        tenant=onboarded.tenant,
        display_name="Acme Arcade",
        accent_color=ACCENT,
        privacy_notice_url="https://acme.example/privacy",
        logo=_logo_png(),
    )
    return onboarded


@pytest.fixture
def open_page(browser):
    """A phone-sized page in a browser whose language is `locale`; CSP bypassed so that axe can be injected."""
    contexts = []

    def open_with(locale: str):
        context = browser.new_context(**PHONE, locale=locale, bypass_csp=True)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield open_with
    for context in contexts:
        context.close()


def assert_accessible(page, name: str, screenshot):
    screenshot(page, f"a11y-{name}")
    assert axe_violations(page) == [], name


def assert_branded(page):
    logo = page.get_by_role("img", name="Acme Arcade")
    expect(logo).to_be_visible()
    assert logo.evaluate("image => image.complete && image.naturalWidth > 0")
    primary = page.locator(".button-primary").first
    assert primary.evaluate("element => getComputedStyle(element).backgroundColor") == ACCENT_RGB


def test_german_sandbox_flow_by_keyboard_alone_with_the_tenants_logo_and_colour(
    branded, partner, live_base_url, open_page, screenshot
):
    created = partner.create_session()  # no return address: the result page stays
    page = open_page("en-US")

    page.goto(created["verificationUrl"] + "&locale=de")

    expect(page.get_by_role("heading", name="Bestätigen Sie Ihr Alter")).to_be_visible()
    assert page.locator("html").get_attribute("lang") == "de"
    assert_branded(page)
    expect(page.get_by_role("link", name="Datenschutzhinweise von Acme Arcade")).to_have_attribute(
        "href", "https://acme.example/privacy"
    )
    assert_accessible(page, "de-consent", screenshot)
    tab_to(page, "Ich stimme zu, weiter")
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name="Testmodus: Ergebnis wählen")).to_be_visible()
    expect(page.get_by_role("heading", name="Oder eine digitale ID verwenden")).to_be_visible()
    assert_accessible(page, "de-sandbox", screenshot)
    tab_to(page, "Genehmigen (Altersschätzung)")
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name="Alter bestätigt")).to_be_visible()
    expect(page.get_by_text("Acme Arcade weiß jetzt, dass Sie die Altersanforderung erfüllen.")).to_be_visible()
    assert_accessible(page, "de-result-approved", screenshot)
    assert partner.get_session(created["sessionId"])["session"]["status"] == "approved"


def test_arabic_flow_is_right_to_left_through_progress_and_document_outcomes(
    branded, partner, live_base_url, open_page, screenshot
):
    created = partner.create_session()
    page = open_page("ar")  # Accept-Language: ar

    page.goto(created["verificationUrl"])

    expect(page.get_by_role("heading", name="أكّد عمرك")).to_be_visible()
    assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") == ["ar", "rtl"]
    assert_branded(page)
    # Mirrored: the topbar starts at the right, the first step of the progress list is the rightmost.
    width = page.viewport_size["width"]
    logo_box = page.get_by_role("img", name="Acme Arcade").bounding_box()
    assert logo_box["x"] > width / 2
    steps = page.locator(".steps li")
    assert steps.first.bounding_box()["x"] > steps.last.bounding_box()["x"]
    assert_accessible(page, "ar-consent", screenshot)
    page.get_by_role("link", name="أوافق، المتابعة").click()

    expect(page.get_by_role("heading", name="وضع الاختبار: اختر النتيجة")).to_be_visible()
    page.get_by_role("button", name="البقاء قيد المعالجة").click()
    expect(page.get_by_role("heading", name="جارٍ فحص صورك")).to_be_visible()
    assert_accessible(page, "ar-progress", screenshot)
    assert partner.advance(created["sessionId"], "requires_doc").status_code == 200

    expect(page.get_by_text("الخطوة الحالية: المستند")).to_be_visible(timeout=10_000)
    assert_accessible(page, "ar-sandbox-document", screenshot)
    page.get_by_role("button", name="رفض (مستند: دون السن المطلوبة)").click()

    expect(page.get_by_role("heading", name="لم تكتمل عملية التحقق")).to_be_visible()
    assert_accessible(page, "ar-result-denied", screenshot)
    assert partner.get_session(created["sessionId"])["session"]["reason"] == "underage_document"


def test_live_camera_pages_and_error_pages_are_accessible_and_label_the_camera(
    live_partner, live_base_url, open_page, screenshot
):
    created = live_partner.create_session()
    page = open_page("en-US")
    page.goto(created["verificationUrl"])
    assert_accessible(page, "en-consent-live", screenshot)
    page.get_by_role("link", name="I agree, continue").click()

    expect(page.get_by_role("heading", name="Take a selfie")).to_be_visible()
    assert_accessible(page, "en-selfie", screenshot)
    page.get_by_role("button", name="Turn on the camera").click()
    expect(page.get_by_role("button", name="Start")).to_be_focused()
    # What a screen reader announces: the preview's name and the status in a live region.
    assert page.locator("video").get_attribute("aria-label") == "Live camera preview of your face"
    expect(page.get_by_role("status").filter(has_text="Camera on. Put your face inside the oval")).to_be_attached()
    assert_accessible(page, "en-selfie-camera-on", screenshot)

    page.get_by_role("button", name="Use an ID document instead").click()
    expect(page.get_by_role("heading", name="Photograph your ID document")).to_be_visible()
    assert_accessible(page, "en-document", screenshot)
    # Under the presence policy the page has a second camera, for the head turns, with its own button.
    page.get_by_role("button", name="Turn on the camera", exact=True).click()
    expect(page.get_by_role("button", name="Take photo")).to_be_focused()
    assert page.locator("video").first.get_attribute("aria-label") == "Live camera preview of your document"
    assert page.locator("video").last.get_attribute("aria-label") == "Live camera preview of your face"
    assert_accessible(page, "en-document-camera-on", screenshot)
    page.get_by_role("button", name="Cancel verification").click()
    expect(page.get_by_role("heading", name="Verification not completed")).to_be_visible()
    assert_accessible(page, "en-result-cancelled", screenshot)

    response = page.goto(created["verificationUrl"].replace("signature=", "signature=x"))
    assert response.status == 403
    assert_accessible(page, "en-error-link", screenshot)


def test_the_accessibility_check_does_find_a_serious_violation(partner, live_base_url, open_page):
    page = open_page("en-US")
    page.goto(partner.create_session()["verificationUrl"])

    page.evaluate("document.querySelector('.button-primary').style.color = '#8fb0ff'")  # poor contrast

    assert [violation["id"] for violation in axe_violations(page)] == ["color-contrast"]
