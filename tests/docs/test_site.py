"""The documentation site at /docs/, as a reader's browser asks for it: every page of docs/ is there (setup
built it), under a policy that lets it load only the service's own files; a path outside the site finds
nothing, and an installation whose setup did not build it says so."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_page_of_docs_is_served_with_a_same_origin_policy(client):
    for page in sorted(DOCS.glob("*.md")):
        address = "/docs/" if page.stem == "index" else f"/docs/{page.stem}/"
        response = client.get(address)

        assert response.status_code == 200, address
        assert response["Content-Type"].startswith("text/html")
        assert "default-src 'self'" in response["Content-Security-Policy"]
        heading = page.read_text().splitlines()[0].removeprefix("# ")
        assert re.search(f"<h1[^>]*>{re.escape(heading)}<", b"".join(response.streaming_content).decode()), address


def test_a_page_without_its_slash_is_redirected_and_the_search_index_is_served(client):
    assert client.get("/docs/webhooks")["Location"] == "/docs/webhooks/"
    index = client.get("/docs/search/search_index.json")
    assert index.status_code == 200 and index["Content-Type"] == "application/json"


def test_a_path_outside_the_site_finds_nothing(client):
    for address in ("/docs/../manage.py", "/docs/..%2f..%2fmanage.py", "/docs/%2e%2e/pyproject.toml", "/docs/nope/"):
        assert client.get(address).status_code == 404, address


def test_an_unbuilt_site_is_a_404_that_says_how_to_build_it(client, settings, tmp_path):
    settings.DOCS_SITE_DIR = tmp_path
    settings.DEBUG = True  # Django's 404 page shows the reason

    response = client.get("/docs/")

    assert response.status_code == 404
    assert "mkdocs build" in response.content.decode()
