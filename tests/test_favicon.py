"""A browser asks every site for /favicon.ico when a page links no icon of its own (the operators' admin, the API
reference, an error page, a JSON answer opened in a tab): it finds the service's icon, not a 404."""

import re


def test_favicon_ico_leads_to_the_services_icon(client):
    response = client.get("/favicon.ico", follow=True)

    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert b"".join(response.streaming_content).startswith(b"<svg")
    assert response.redirect_chain == [("/static/dashboard/logo.svg", 301)]


def test_the_pages_that_link_an_icon_link_one_that_answers(client, db):
    for page in ("/", "/dashboard/login/"):
        icon = re.search(r'<link rel="icon"[^>]*\bhref="([^"]+)"', client.get(page).content.decode())
        assert icon, f"{page} links no icon"
        assert client.get(icon[1]).status_code == 200, (page, icon[1])
