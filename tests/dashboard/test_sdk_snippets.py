"""The SDK tag and return parameter as the docs and the dashboard print them (issue 29's trip-ups)."""

import base64
import hashlib
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from django.test import Client

from flow.sdk_files import sdk_integrity
from sessions_api.return_urls import return_url

DOCS = Path(__file__).resolve().parents[2] / "docs"
TAG = re.compile(r'<script src="https://verify\.example/sdk/v1/ageverify\.js" integrity="([^"]+)"')


def test_the_documented_sdk_tag_carries_the_real_integrity_value_of_its_example_origin(settings, db):
    [printed] = TAG.findall((DOCS / "integration-sdk.md").read_text())
    settings.PUBLIC_BASE_URL = "https://verify.example"

    assert printed == sdk_integrity("ageverify.js")
    # What a browser checks: the file served for that origin hashes to the printed value.
    served = b"".join(Client().get("/sdk/v1/ageverify.js"))
    assert printed == "sha384-" + base64.b64encode(hashlib.sha384(served).digest()).decode()


def test_the_sdk_snippets_use_the_hosted_flows_return_parameter(dashboard):
    [flow_parameter] = parse_qs(urlsplit(return_url("https://shop.example/verified", "ses_x")).query)
    assert flow_parameter == "session_id"

    snippet = dashboard.get("/dashboard/sdk/").content.decode()
    docs = (DOCS / "integration-sdk.md").read_text()
    for text in (snippet, docs):
        assert "/verified?session_id=" in text
        assert not re.search(r"[?&]session=", text)


def test_a_secret_key_sent_from_a_browser_is_warned_about_on_home_too(dashboard, onboarded):
    from tenants.models import ApiKey

    browser = Client()
    flagged = browser.get("/v1/client/config", {"key": onboarded.test_key}, headers={"Origin": "https://shop.example"})
    assert flagged.json()["code"] == "secret_key_not_allowed"
    prefix = ApiKey.objects.get(tenant=onboarded.tenant, mode="test").prefix

    for page in ("/dashboard/", "/dashboard/sdk/"):
        html = dashboard.get(page).content.decode()
        assert f'data-exposed-key="{prefix}"' in html, page
        assert "was sent from a browser or app" in html, page


def test_url_fields_are_labelled_url_not_url_in_lower_case(dashboard):
    html = dashboard.get("/dashboard/sdk/").content.decode()
    assert "Return URLs" in html
    assert "Return urls" not in html and "Client notification url" not in html
