"""The flow's pages: each follows the session's status, cancel finalizes, CSRF guards POSTs, errors are friendly."""

import re

import pytest
from django.test import Client

from sessions_api.models import SessionEvent
from sessions_api.state_machine import session_transition
from tenants.models import Tenant
from tests.factories import session_past_expiry
from tests.support.flow import open_flow


def csrf_token_of(response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.content.decode()).group(1)


def move(session_id, *statuses):
    for status in statuses:
        session_transition(session_id=session_id, to=status, cause="test")


def test_without_the_cookie_every_page_explains_how_to_get_back(db):
    for path in ("/flow/", "/flow/selfie", "/flow/progress", "/flow/document", "/flow/result"):
        response = Client().get(path)
        assert response.status_code == 403
        assert "We could not find your verification" in response.content.decode()


def test_a_forged_cookie_is_ignored(live_visitor):
    client = Client()
    client.cookies["av_flow"] = live_visitor.session_id  # unsigned: what a user could type in

    response = client.get("/flow/")

    assert response.status_code == 403


def test_consent_page_says_what_is_analysed_and_that_images_are_deleted(live_visitor):
    response = live_visitor.client.get("/flow/")

    body = response.content.decode()
    assert "Acme Games" in body and "at least <strong>18&nbsp;years old</strong>" in body
    assert "deleted right after the analysis" in body
    assert 'href="/flow/selfie"' in body
    assert 'action="/flow/cancel"' in body and "csrfmiddlewaretoken" in body


def test_flow_pages_are_not_cached_framed_or_given_external_sources(live_visitor):
    response = live_visitor.client.get("/flow/")

    assert response["Cache-Control"] == "no-store"
    assert "default-src 'self'" in response["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    # Not "no-referrer": browsers would then send `Origin: null` on the flow's own forms and the
    # CSRF origin check would refuse them (seen in the browser test before this was fixed).
    assert response["Referrer-Policy"] == "same-origin"
    assert not re.search(r'(src|href)="(https?:)?//', response.content.decode())


def test_selfie_page_issues_a_challenge_and_shows_its_instructions_in_order(live_visitor):
    body = live_visitor.client.get("/flow/selfie").content.decode()

    challenge = live_visitor.session.liveness_challenge
    assert len(challenge) >= 2 and challenge[-1] == "center"
    assert f'name="challenge" value="{",".join(challenge)}"' in body
    fields = re.findall(r'<input type="file" id="(frame_\d+_\w+)"', body)
    assert fields == [f"frame_{index}_{step}" for index, step in enumerate(challenge)]
    assert "Attempt 1 of 3" in body and "Use an ID document instead" in body


def test_selfie_page_says_the_screen_changes_colour_and_offers_a_document_instead(live_visitor):
    english = live_visitor.client.get("/flow/selfie").content.decode()
    german = live_visitor.client.get("/flow/selfie", HTTP_ACCEPT_LANGUAGE="de").content.decode()

    live_visitor.session.refresh_from_db()
    assert len(live_visitor.session.liveness_flash) == 3 * len(live_visitor.session.liveness_challenge)
    assert "the screen around the camera turns red, green or blue, about once a second" in english
    assert "If changing colours are a problem for you, use an ID document instead" in english
    assert "rot, grün oder blau" in german and "the screen around the camera" not in german


@pytest.mark.parametrize(
    "status_path,pages",
    [
        ((), ("/flow/", "/flow/selfie")),
        (("processing",), ("/flow/progress",)),
        (("processing", "requires_doc"), ("/flow/document",)),
    ],
)
def test_every_page_redirects_to_the_page_of_the_current_status(live_visitor, status_path, pages):
    move(live_visitor.session_id, *status_path)

    for path in ("/flow/", "/flow/selfie", "/flow/progress", "/flow/document", "/flow/result", "/flow/sandbox"):
        response = live_visitor.client.get(path)
        if path in pages:
            assert response.status_code == 200, path
        else:
            assert response.status_code == 303, path
            assert response["Location"] == pages[0], path


def test_status_endpoint_reports_the_status_and_the_next_page(live_visitor):
    assert live_visitor.client.get("/flow/status").json() == {"status": "initiated", "next": "/flow/"}
    move(live_visitor.session_id, "processing")
    assert live_visitor.client.get("/flow/status").json() == {"status": "processing", "next": "/flow/progress"}
    move(live_visitor.session_id, "requires_doc")
    assert live_visitor.client.get("/flow/status").json() == {"status": "requires_doc", "next": "/flow/document"}


def test_progress_page_polls_and_refreshes_without_javascript(live_visitor):
    move(live_visitor.session_id, "processing")

    body = live_visitor.client.get("/flow/progress").content.decode()

    assert 'data-status-url="/flow/status"' in body and "flow/progress.js" in body
    assert '<noscript><meta http-equiv="refresh" content="3"></noscript>' in body
    assert 'aria-live="polite"' in body


@pytest.mark.parametrize("status_path", [(), ("processing",), ("processing", "requires_doc")])
def test_cancel_finalizes_as_cancelled_and_returns_to_the_cancel_url(live_visitor, api, status_path):
    move(live_visitor.session_id, *status_path)

    response = live_visitor.client.post("/flow/cancel")

    assert response.status_code == 303
    assert response["Location"] == f"https://shop.example.com/cancel?session_id={live_visitor.session_id}"
    body = api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]
    assert (body["status"], body["reason"]) == ("denied", "cancelled")


def test_return_addresses_keep_their_own_query_and_get_the_session_id(api):
    visitor = open_flow(api, cancel_url="https://shop.example.com/back?order=7&session_id=forged#top")

    response = visitor.client.post("/flow/cancel")

    assert response["Location"] == f"https://shop.example.com/back?order=7&session_id={visitor.session_id}#top"


def test_cancel_without_a_cancel_url_shows_the_cancelled_page(api):
    visitor = open_flow(api)

    response = visitor.client.post("/flow/cancel", follow=True)

    assert response.redirect_chain == [("/flow/result", 303)]
    assert "You cancelled the verification." in response.content.decode()
    assert "You can close this window." in response.content.decode()


def test_cancel_after_a_decision_changes_nothing(sandbox_visitor, sandbox_api):
    sandbox_api.post(f"/v1/test/sessions/{sandbox_visitor.session_id}/advance", {"to": "approved"})

    response = sandbox_visitor.client.post("/flow/cancel")

    assert response["Location"] == "/flow/result"
    assert sandbox_visitor.session.status == "approved"


def test_posts_without_a_csrf_token_are_refused_with_a_friendly_page(api):
    visitor = open_flow(api, cancel_url="https://shop.example.com/cancel", client=Client(enforce_csrf_checks=True))

    for path in ("/flow/cancel", "/flow/selfie", "/flow/document", "/flow/no-camera", "/flow/sandbox"):
        response = visitor.client.post(path, {"challenge": "left,center"})
        assert response.status_code == 403, path
        assert "Please reload the page" in response.content.decode()
    assert visitor.session.status == "initiated"


def test_posts_with_the_pages_csrf_token_go_through(api):
    visitor = open_flow(api, cancel_url="https://shop.example.com/cancel", client=Client(enforce_csrf_checks=True))
    token = csrf_token_of(visitor.client.get("/flow/"))

    response = visitor.client.post("/flow/cancel", {"csrfmiddlewaretoken": token})

    assert response.status_code == 303
    assert visitor.session.status == "denied"


def test_no_camera_leads_to_the_document_step(live_visitor):
    response = live_visitor.client.post("/flow/no-camera")

    assert response["Location"] == "/flow/document"
    assert live_visitor.session.status == "requires_doc"
    assert live_visitor.session.selfie_attempts == 0
    page = live_visitor.client.get("/flow/document").content.decode()
    assert "photo page of your passport" in page and "<strong>driving licence</strong>: the front" in page
    # The presence policy (on by default): the head turns come with the document, on the same page.
    challenge = live_visitor.session.liveness_challenge
    assert len(challenge) == 4 and f'name="frame_3_{challenge[3]}"' in page and "Then: turn your head" in page


def test_with_the_presence_policy_off_the_document_page_asks_for_the_document_only(live_visitor):
    Tenant.objects.update(document_presence_required=False)
    live_visitor.client.post("/flow/no-camera")

    page = live_visitor.client.get("/flow/document").content.decode()
    assert "back of your driving licence" in page and 'name="challenge"' not in page


def test_an_expired_session_shows_the_expired_result(live_visitor):
    session_past_expiry(live_visitor.session_id)

    response = live_visitor.client.get("/flow/", follow=True)

    assert "The time for this verification ran out." in response.content.decode()
    assert f'href="https://shop.example.com/cancel?session_id={live_visitor.session_id}"' in response.content.decode()
    assert live_visitor.session.reason == "expired"


def test_unknown_flow_address_gets_the_friendly_404(db):
    response = Client().get("/flow/nope/../admin")

    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


# --- sandbox sessions ---


def test_sandbox_consent_leads_to_the_outcome_buttons_not_the_camera(sandbox_visitor):
    consent = sandbox_visitor.client.get("/flow/").content.decode()
    assert "Test mode" in consent and 'href="/flow/sandbox"' in consent

    assert sandbox_visitor.client.get("/flow/selfie")["Location"] == "/flow/sandbox"
    body = sandbox_visitor.client.get("/flow/sandbox").content.decode()
    assert 'value="approved"' in body and 'value="requires_doc"' in body and 'value="denied"' in body


def test_sandbox_approve_button_ends_on_the_result_page_that_returns_to_the_callback(
    sandbox_visitor, sandbox_api, age_policy_file
):
    age_policy_file({18: 28.0})  # the face path on, so the approval is by age estimation
    response = sandbox_visitor.client.post("/flow/sandbox", {"outcome": "approved"}, follow=True)

    assert response.redirect_chain == [("/flow/result", 303)]
    body = response.content.decode()
    assert "Age confirmed" in body
    back = f"https://shop.example.com/done?session_id={sandbox_visitor.session_id}"
    assert f'<meta http-equiv="refresh" content="3;url={back}">' in body
    assert f'href="{back}"' in body
    api_body = sandbox_api.get(f"/v1/sessions/{sandbox_visitor.session_id}").json()
    assert api_body["session"]["reason"] == "age_estimation"
    assert SessionEvent.objects.filter(session_id=sandbox_visitor.session_id).last().cause.startswith("sandbox:")


def test_sandbox_document_step_offers_document_outcomes(sandbox_visitor):
    sandbox_visitor.client.post("/flow/sandbox", {"outcome": "requires_doc"})

    body = sandbox_visitor.client.get("/flow/sandbox").content.decode()
    assert "Approve (document)" in body and "Deny (underage document)" in body
    response = sandbox_visitor.client.post("/flow/sandbox", {"outcome": "denied"}, follow=True)
    assert (
        "does not meet the minimum age" in response.content.decode()
        or "do not meet the minimum age" in response.content.decode()
    )
    assert sandbox_visitor.session.reason == "underage_document"


def test_sandbox_processing_outcome_waits_on_the_progress_page_for_the_api(sandbox_visitor, sandbox_api):
    assert sandbox_visitor.client.post("/flow/sandbox", {"outcome": "processing"})["Location"] == "/flow/progress"

    sandbox_api.post(f"/v1/test/sessions/{sandbox_visitor.session_id}/advance", {"to": "requires_doc"})

    assert sandbox_visitor.client.get("/flow/status").json() == {"status": "requires_doc", "next": "/flow/sandbox"}


def test_an_unknown_sandbox_outcome_is_refused(sandbox_visitor):
    response = sandbox_visitor.client.post("/flow/sandbox", {"outcome": "approved_please"})

    assert response.status_code == 400
    assert sandbox_visitor.session.status == "initiated"


def test_a_live_session_has_no_outcome_buttons(live_visitor):
    assert live_visitor.client.post("/flow/sandbox", {"outcome": "approved"})["Location"] == "/flow/"
    assert live_visitor.session.status == "initiated"
