"""The API reference pages in a real browser: nothing is fetched from another host, and Swagger's
"Try it out" with the documented example creates a session."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e


def outside_requests(page, base_url: str) -> list[str]:
    """Records every request the page makes to another origin (and lets none of them through)."""
    seen = []

    def route(route):
        if route.request.url.startswith(base_url) or route.request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            seen.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    return seen


@pytest.mark.parametrize(
    "path, ready",
    [
        ("/v1/redoc", "h2:has-text('Create a verification session')"),
        ("/v1/docs", ".opblock-summary:has-text('Create a verification session')"),
    ],
)
def test_the_api_reference_uses_only_the_services_own_assets(page, live_base_url, path, ready):
    page.set_viewport_size({"width": 1280, "height": 900})
    outside = outside_requests(page, live_base_url)

    page.goto(live_base_url + path, wait_until="networkidle")
    expect(page.locator(ready).first).to_be_visible()
    page.wait_for_timeout(500)  # late images (Redoc's sidebar footer) load after the first render

    assert outside == []


def test_swaggers_try_it_out_creates_a_session_with_the_documented_example(page, live_base_url, onboarded):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_base_url}/v1/docs")
    page.get_by_role("button", name=re.compile("Authorize")).first.click()
    page.locator(".modal-ux input[type=text]").fill(onboarded.test_key)
    page.locator(".modal-ux").get_by_role("button", name="Apply credentials").click()
    page.locator(".modal-ux").get_by_role("button", name="Close").click()

    operation = page.locator("#operations-sessions-sessions_create")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.get_by_role("button", name="Execute").click()

    status = operation.locator(".live-responses-table .response .response-col_status").first
    expect(status).to_have_text("201")
    expect(operation.locator(".live-responses-table .response .response-col_description").first).to_contain_text(
        '"sessionId"'
    )
