"""The service's root address leads somewhere: a user learns where to go, a partner finds the docs and the dashboard."""

import re


def test_the_root_page_links_the_reference_and_the_dashboard_and_every_link_answers(client, db):
    response = client.get("/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "Open the verification link from the site that sent you" in page
    links = re.findall(r'href="(/[^"]*)"', page)
    assert {"/docs/", "/v1/docs", "/v1/redoc", "/v1/openapi.json", "/dashboard/"} <= set(links)
    for link in links:
        assert client.get(link).status_code in (200, 302), link
