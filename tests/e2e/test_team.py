"""An owner invites a viewer from the Team page; the viewer joins from the email's link and cannot reveal a secret.

Screenshots: test-artifacts/dashboard-team.png, dashboard-viewer-refused.png.
"""

import re

import pytest
from django.core import mail
from playwright.sync_api import expect

from tenants.models import AuditLogEntry, Tenant
from tenants.services import membership_add
from tests.factories import SETUP, UserFactory

pytestmark = pytest.mark.e2e

PASSWORD = "correct horse battery staple"
VIEWER_PASSWORD = "a long and unusual passphrase 77"
DESKTOP = {"viewport": {"width": 1360, "height": 900}}


@pytest.fixture
def owner(onboarded, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    user = UserFactory(username="alice", email="alice@acme.test")
    user.set_password(PASSWORD)
    user.save()
    membership_add(tenant=onboarded.tenant, user=user, actor=SETUP)
    return user


def _tab(browser):
    context = browser.new_context(**DESKTOP)
    context.set_default_timeout(15_000)
    return context.new_page()


def test_an_invited_viewer_signs_in_and_cannot_reveal_a_secret(
    browser, live_base_url, owner, onboarded, screenshot, settings
):
    page = _tab(browser)
    page.goto(f"{live_base_url}/dashboard/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("link", name="Team").click()
    page.get_by_label("Email").fill("vera@partner.test")
    page.get_by_label("Role", exact=True).select_option("viewer")
    page.get_by_role("button", name="Send invitation").click()
    expect(page.locator(".messagelist")).to_contain_text("Invitation sent to vera@partner.test as viewer")
    expect(page.locator("#pending-invitations")).to_contain_text("vera@partner.test")
    screenshot(page, "dashboard-team")

    (message,) = mail.outbox
    (link,) = re.findall(r"http://\S+/dashboard/invitations/\S+/", message.body)
    viewer = _tab(browser)
    viewer.goto(link)
    expect(viewer.get_by_role("heading", name="Join Acme Games")).to_be_visible()
    viewer.get_by_label("Choose a password").fill(VIEWER_PASSWORD)
    viewer.get_by_label("The same password again").fill(VIEWER_PASSWORD)
    viewer.get_by_role("button", name="Join Acme Games").click()
    expect(viewer.locator(".messagelist")).to_contain_text("you joined as viewer")

    # Signed out and in again, with the email as the username, as the welcome message says.
    viewer.context.clear_cookies()
    viewer.goto(f"{live_base_url}/dashboard/")
    viewer.get_by_label("Username").fill("vera@partner.test")
    viewer.get_by_label("Password").fill(VIEWER_PASSWORD)
    viewer.get_by_role("button", name="Sign in").click()
    expect(viewer.get_by_role("heading", name="Acme Games")).to_be_visible()
    viewer.get_by_role("link", name="Webhooks").click()
    expect(viewer.locator("#signing-secret-live")).to_contain_text("whsec_••")
    expect(viewer.get_by_role("button", name="Reveal")).to_have_count(0)
    expect(viewer.get_by_role("link", name="Rotate secret…")).to_have_count(0)

    # The button's request, made by hand with the page's own CSRF token: refused on the server.
    csrf = next(cookie["value"] for cookie in viewer.context.cookies() if cookie["name"] == settings.CSRF_COOKIE_NAME)
    refused = viewer.request.post(
        f"{live_base_url}/dashboard/webhooks/secret/reveal/",
        form={"mode": "live", "csrfmiddlewaretoken": csrf},
        headers={"Referer": f"{live_base_url}/dashboard/webhooks/"},
    )
    assert refused.status == 403
    secrets = Tenant.objects.filter(pk=onboarded.tenant.pk).values_list("webhook_secret", "test_webhook_secret").get()
    assert "Not allowed for your role" in refused.text() and not any(secret in refused.text() for secret in secrets)
    viewer.goto(f"{live_base_url}/dashboard/webhooks/secret/rotate/?mode=live")
    expect(viewer.get_by_role("heading", name="Not allowed for your role")).to_be_visible()
    screenshot(viewer, "dashboard-viewer-refused")
    assert not AuditLogEntry.objects.filter(action="webhook_secret.revealed").exists()
    assert list(
        AuditLogEntry.objects.exclude(actor_label=SETUP.label).order_by("id").values_list("action", flat=True)
    ) == [
        "member.invited",
        "member.joined",
    ]
