"""Browser fixtures for end-to-end tests: Debian's Chromium driven by Playwright against pytest-django's live server.

Reuse:
    @pytest.mark.e2e
    def test_something(partner, page, screenshot):
        created = partner.create_session(subject="u1", age_limit=18)   # POST /v1/sessions over HTTP
        page.goto(created["verificationUrl"])
        screenshot(page, "something")                                   # test-artifacts/something.png

`browser` is launched once per test session with a fake camera (Chromium's test pattern, the
permission prompt auto-accepted); `launch_browser(*extra_args)` launches another one, e.g. with
`--use-file-for-fake-video-capture=frames.y4m` to feed real frames to getUserMedia.
"""

import os
from pathlib import Path

import pytest
import requests

from checks.digital_id.sandbox_wallet import issuer_create
from checks.digital_id.trust import EU_AGE_ATTESTATION
from tenants.models import Tenant
from tests.support.camera import SCRIPTED_CAMERA_JS
from wallets.trust_anchors import trust_anchors_replace

# Playwright's sync API runs an event loop in the test thread; Django's ORM would refuse to run
# beside it. Each ORM call in these tests is still synchronous and in this one thread.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
FAKE_CAMERA_ARGS = ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True, "has_touch": True}


@pytest.fixture(scope="session")
def playwright_instance():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (scripts/test installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def launch_browser(playwright_instance):
    launched = []

    def launch(*extra_args: str):
        browser = playwright_instance.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=[*CHROMIUM_ARGS, *extra_args]
        )
        launched.append(browser)
        return browser

    yield launch
    for browser in launched:
        browser.close()


@pytest.fixture(scope="session")
def browser(launch_browser):
    return launch_browser(*FAKE_CAMERA_ARGS)


@pytest.fixture
def page(browser):
    """A fresh phone-sized browser context (own cookies) with camera permission, and its page."""
    context = browser.new_context(**PHONE)
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def screenshot():
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


class Partner:
    """A partner backend calling the API of the live server over real HTTP with its key."""

    def __init__(self, base_url: str, api_key: str):
        self.base_url = base_url
        self.http = requests.Session()
        self.http.headers.update({"X-API-Key": api_key})

    def create_session(self, **fields) -> dict:
        response = self.http.post(
            f"{self.base_url}/v1/sessions", json={"subject": "user-42", "age_limit": 18, **fields}, timeout=10
        )
        assert response.status_code == 201, response.text
        return response.json()["session"]

    def get_session(self, session_id: str) -> dict:
        response = self.http.get(f"{self.base_url}/v1/sessions/{session_id}", timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def advance(self, session_id: str, to: str) -> requests.Response:
        return self.http.post(f"{self.base_url}/v1/test/sessions/{session_id}/advance", json={"to": to}, timeout=10)


@pytest.fixture
def live_base_url(live_server, settings, transactional_db):
    """The live server's address, which verificationUrl links now point to."""
    settings.PUBLIC_BASE_URL = live_server.url
    return live_server.url


def _partner(base_url: str, api_key: str):
    partner = Partner(base_url, api_key)
    yield partner
    # Hang up: the live server's thread serving a keep-alive connection holds a database connection
    # until then, which would keep the test database from being dropped at the end of the run.
    partner.http.close()


@pytest.fixture
def partner(live_base_url, onboarded):
    """The onboarded tenant's backend with its test (sandbox) key."""
    yield from _partner(live_base_url, onboarded.test_key)


@pytest.fixture
def live_partner(live_base_url, onboarded):
    """The onboarded tenant's backend with its live key."""
    yield from _partner(live_base_url, onboarded.live_key)


@pytest.fixture
def wallet_ready(onboarded):
    """The onboarded tenant offers the digital ID, trusting a test issuer (returned) for EU age attestations."""
    issuer = issuer_create(name="Utopia AV issuer", country="UT")
    trust_anchors_replace(source="pem:utopia", issuers=[(issuer.root, [EU_AGE_ATTESTATION])], sandbox=False)
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(digital_id_enabled=True, digital_id_unsigned_requests=True)
    return issuer


@pytest.fixture(autouse=True)
def _face_path_on(face_path_on):
    """The browser tests walk the selfie step: the face path is on unless a test turns it off."""


@pytest.fixture(autouse=True)
def _live_requests_finish_before_flush(request):
    """After a live-server test, wait for requests the browser already sent before the tables are emptied.

    A page may still have a request in flight when its test ends (the digital-ID block prepares a fresh
    request after a failed try). The live server's thread then holds row locks that the teardown's
    TRUNCATE needs, in the other order: PostgreSQL reports a deadlock and the test errors. Set up after
    `transactional_db` and before `page`, this is torn down after the page is closed and before the flush.
    """
    if "transactional_db" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    _wait_for_other_connections_to_settle()


def _wait_for_other_connections_to_settle(timeout: float = 10.0):
    import time

    from django.db import connection

    if connection.vendor != "postgresql":
        return
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
                " AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)')"
            )
            if not cursor.fetchone()[0]:
                return
            time.sleep(0.05)


def clocked_page(browser, init_script: str | None = None):
    """A phone-sized page with its own cookies, whose clock the test drives (see take_selfie)."""
    context = browser.new_context(**PHONE)
    context.set_default_timeout(15_000)
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    page.clock.install()
    return page


@pytest.fixture
def scripted_page(browser):
    """A page whose camera is the scripted one (tests.support.camera)."""
    page = clocked_page(browser, SCRIPTED_CAMERA_JS)
    yield page
    page.context.close()
