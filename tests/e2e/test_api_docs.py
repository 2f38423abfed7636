"""The API reference pages and the documentation site in a real browser: nothing is fetched from another
host (nor tried and refused by the pages' Content-Security-Policy), the site's search works offline, and
Swagger's "Try it out" with the documented example creates a session."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

DOCS = Path(__file__).resolve().parents[2] / "docs"


def outside_requests(page, base_url: str) -> list[str]:
    """Records every request the page makes to another origin (and lets none of them through), and every
    load the browser refused by the page's Content-Security-Policy before it became a request."""
    seen = []

    def route(route):
        if route.request.url.startswith(base_url) or route.request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            seen.append(route.request.url)
            route.abort()

    page.route("**/*", route)
    page.on("console", lambda message: "Content Security Policy" in message.text and seen.append(message.text))
    return seen


def test_redoc_uses_only_the_services_own_assets(page, live_base_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    outside = outside_requests(page, live_base_url)

    page.goto(live_base_url + "/v1/redoc", wait_until="networkidle")
    expect(page.locator("h2:has-text('Create a verification session')").first).to_be_visible()
    # The sidebar's footer image, which the stock bundle fetches from cdn.redoc.ly, renders after the rest:
    # once it is there and loaded, the page has asked for every image it shows.
    logo = page.get_by_role("link", name="API docs by Redocly").locator("img")
    expect(logo).to_have_attribute("src", re.compile(r"^data:"))
    page.wait_for_function("image => image.complete", arg=logo.element_handle())

    assert outside == []


def test_swagger_uses_only_the_services_own_assets(page, live_base_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    outside = outside_requests(page, live_base_url)

    page.goto(live_base_url + "/v1/docs", wait_until="networkidle")
    expect(page.locator(".opblock-summary:has-text('Create a verification session')").first).to_be_visible()
    page.wait_for_function("() => Array.from(document.images).every(image => image.complete)")

    assert outside == []


def test_every_page_of_the_documentation_site_uses_only_the_services_own_assets(page, live_base_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    outside = outside_requests(page, live_base_url)
    addresses = sorted("/docs/" if path.stem == "index" else f"/docs/{path.stem}/" for path in DOCS.glob("*.md"))

    for address in addresses:
        page.goto(live_base_url + address, wait_until="networkidle")
        expect(page.locator("article h1").first).to_be_visible()
        page.wait_for_function("() => Array.from(document.images).every(image => image.complete)")

    assert len(addresses) >= 20
    assert outside == []


def test_the_documentation_sites_search_finds_a_page_offline(page, live_base_url):
    page.set_viewport_size({"width": 1280, "height": 900})
    outside = outside_requests(page, live_base_url)
    page.goto(live_base_url + "/docs/", wait_until="networkidle")

    search = page.get_by_role("textbox", name="Search")
    search.focus()
    # The index loads in a worker (a file of the site); a query typed before it is ready is not run.
    expect(page.locator(".md-search-result__meta")).to_have_text("Type to start searching")
    search.press_sequentially("Standard Webhooks")  # key by key, as a reader types: the query runs on keyup
    result = page.locator(".md-search-result__item a").first

    expect(result).to_be_visible()
    result.click()
    expect(page).to_have_url(re.compile(r"/docs/webhooks/"))
    expect(page.locator("article h1")).to_have_text(re.compile(r"^Webhooks"))
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
