"""Abusive uploads (issue 11, finding 1): the web side reads headers only, refusals are counted, posts are limited."""

import pytest

from bench.upload_flood import big_rgba_png, lying_jpeg
from sessions_api.submission import MAX_REFUSED_UPLOADS
from tests.support.flow import open_flow
from tests.support.uploads import jpeg, post_document, selfie_form, upload
from webhooks.models import WebhookDelivery


def post_without_frames(visitor):
    """A selfie post with the page's challenge and no picture: refused (400) after the body is read."""
    visitor.client.get("/flow/selfie")
    challenge = ",".join(visitor.session.liveness_challenge)
    return visitor.client.post("/flow/selfie", {"challenge": challenge})


@pytest.fixture
def no_flow_limits(settings):
    settings.FLOW_UPLOAD_BURST_PER_SESSION = settings.FLOW_UPLOAD_BURST_PER_ADDRESS = 1000


def test_four_5000x5000_pictures_are_over_the_pixel_budget_and_refused_from_their_headers(live_visitor):
    form = selfie_form(live_visitor, frames_per_step=1, data_for=lambda index, step: big_rgba_png())
    for files in form.values():
        if isinstance(files, list):
            for file in files:
                file.content_type = "image/png"

    response = live_visitor.client.post("/flow/selfie", form)

    assert response.status_code == 413 and "too large together" in response.content.decode()
    session = live_visitor.session
    assert (session.status, session.selfie_attempts, session.refused_uploads) == ("initiated", 0, 1)


def test_a_tiny_picture_whose_header_claims_25_megapixels_is_refused_by_the_web_side_before_any_decode(
    document_visitor,
):
    # 632 bytes claiming 4999x5000 (issue 28): decoding it cost the analysis worker 3-13 s under load, and
    # eight of them delayed another tenant's result by 72 s. No real picture has so few bytes for its pixels.
    response = post_document(document_visitor, lying_jpeg())

    assert response.status_code == 400
    assert "The picture is damaged or incomplete" in response.content.decode()
    session = document_visitor.session
    assert (session.status, session.document_attempts, session.refused_uploads) == ("requires_doc", 0, 1)


def test_refused_uploads_are_counted_and_the_last_one_allowed_ends_the_session(live_visitor, onboarded, no_flow_limits):
    form = selfie_form(live_visitor)
    last_field = [name for name in form if name.startswith("frame_")][-1]

    for attempt in range(1, MAX_REFUSED_UPLOADS + 1):
        form = selfie_form(live_visitor)
        form[last_field][-1] = upload("last.jpg", b"\xff\xd8\xff" + b"not a picture" * 40)
        response = live_visitor.client.post("/flow/selfie", form)
        if attempt < MAX_REFUSED_UPLOADS:
            assert response.status_code == 400, attempt
            assert live_visitor.session.refused_uploads == attempt

    assert response.status_code == 303
    session = live_visitor.session
    assert (session.status, session.reason) == ("denied", "attempts_exceeded")
    assert live_visitor.client.post("/flow/selfie", selfie_form(live_visitor)).status_code == 303  # nothing more
    assert WebhookDelivery.objects.filter(subject_ref=session.id).count() == 0  # no notification_url here


def test_a_refusal_on_the_document_step_counts_too(document_visitor):
    post_document(document_visitor, b"not a picture at all" * 10)
    assert document_visitor.session.refused_uploads == 1


def test_upload_posts_are_limited_per_session_before_the_body_is_read(live_visitor, settings):
    settings.FLOW_UPLOAD_BURST_PER_SESSION = 2
    answers = [post_without_frames(live_visitor).status_code for _ in range(2)]
    assert answers == [400, 400]

    limited = live_visitor.client.post("/flow/selfie", selfie_form(live_visitor))

    assert limited.status_code == 429 and int(limited["Retry-After"]) >= 1
    assert "Too many uploads" in limited.content.decode() and limited["Connection"] == "close"
    session = live_visitor.session
    assert (session.status, session.refused_uploads) == ("initiated", 2)  # a limited post is not counted


def test_upload_posts_are_limited_per_client_address_across_sessions(api, settings):
    settings.FLOW_UPLOAD_BURST_PER_ADDRESS = 3
    visitors = [open_flow(api) for _ in range(4)]
    answers = [post_without_frames(visitor).status_code for visitor in visitors]

    assert answers == [400, 400, 400, 429]
    other = open_flow(api)
    other.client.defaults["REMOTE_ADDR"] = "198.51.100.9"
    assert post_without_frames(other).status_code == 400


def test_the_limits_fail_open_when_redis_is_unreachable(live_visitor, settings):
    from core import rate_limit

    settings.FLOW_UPLOAD_BURST_PER_SESSION = 1
    rate_limit._redis_client.cache_clear()
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    try:
        answers = [post_without_frames(live_visitor).status_code for _ in range(3)]
    finally:
        rate_limit._redis_client.cache_clear()
    assert answers == [400, 400, 400]


def test_good_camera_frames_still_go_to_processing(live_visitor):
    response = live_visitor.client.post(
        "/flow/selfie",
        selfie_form(live_visitor, frames_per_step=8, data_for=lambda index, step: jpeg(640, 480, noise=True)),
    )
    assert response.status_code == 303 and live_visitor.session.status == "processing"
