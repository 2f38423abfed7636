"""Selfie and document uploads: capped, sniffed, bombs refused, kept off disk, and only then sent to analysis."""

from sessions_api.state_machine import session_transition
from tests.support.flow import TEST_CLIENT_ADDRESS
from tests.support.uploads import jpeg, png_bomb, post_document, selfie_form


def assert_refused(visitor, response, status: int, message: str, session_status: str):
    assert response.status_code == status
    assert message in response.content.decode()
    assert 'role="alert"' in response.content.decode()
    session = visitor.session
    assert session.status == session_status
    assert (session.selfie_attempts, session.document_attempts) == (0, 0)


# --- document ---


def test_a_text_file_renamed_jpg_is_refused_as_not_a_picture(document_visitor):
    response = post_document(document_visitor, b"name,birthdate\nAnna,1996-02-29\n" * 50)

    assert_refused(document_visitor, response, 400, "not a picture we can read", "requires_doc")


def test_a_decompression_bomb_is_refused_before_it_is_decoded(document_visitor):
    bomb = png_bomb()
    assert len(bomb) < 100_000

    response = post_document(document_visitor, bomb, name="id.png")

    assert_refused(document_visitor, response, 400, "larger than 25 megapixels", "requires_doc")


def test_a_picture_over_10_mb_is_refused(document_visitor):
    too_big = jpeg()[:-2] + b"\x00" * (10 * 1024 * 1024) + b"\xff\xd9"

    response = post_document(document_visitor, too_big)

    assert_refused(document_visitor, response, 413, "larger than 10 MB", "requires_doc")


def test_a_request_announcing_a_huge_body_is_refused_without_reading_it(document_visitor):
    response = document_visitor.client.post(
        "/flow/document",
        data=b"--x--",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(500 * 1024 * 1024),
    )

    assert_refused(document_visitor, response, 413, "too large to send together", "requires_doc")


def test_a_post_without_a_picture_asks_for_one(document_visitor):
    response = document_visitor.client.post("/flow/document", {})

    assert_refused(document_visitor, response, 400, "Choose or take a picture", "requires_doc")


def test_a_good_document_photo_goes_to_processing(document_visitor):
    response = post_document(document_visitor, jpeg(800, 600))

    assert response.status_code == 303 and response["Location"] == "/flow/progress"
    assert document_visitor.session.status == "processing"


def test_large_uploads_stay_in_memory_never_in_a_temporary_file(document_visitor, settings, tmp_path):
    # Django's default handlers write uploads over 2.5 MB to FILE_UPLOAD_TEMP_DIR; a missing
    # directory would make them fail. The flow's handler never opens a file there.
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "does-not-exist")
    photo = jpeg(1600, 1600, noise=True)
    assert len(photo) > settings.FILE_UPLOAD_MAX_MEMORY_SIZE

    response = post_document(document_visitor, photo)

    assert response.status_code == 303
    assert document_visitor.session.status == "processing"


# --- selfie ---


def test_good_selfie_frames_go_to_processing(live_visitor):
    response = live_visitor.client.post("/flow/selfie", selfie_form(live_visitor))

    assert response.status_code == 303 and response["Location"] == "/flow/progress"
    assert live_visitor.session.status == "processing"


def test_a_selfie_missing_one_steps_pictures_is_refused(live_visitor):
    form = selfie_form(live_visitor)
    del form[next(name for name in form if name.startswith("frame_1_"))]

    response = live_visitor.client.post("/flow/selfie", form)

    assert_refused(live_visitor, response, 400, "did not receive a picture for every instruction", "initiated")


def test_a_selfie_frame_that_is_not_an_image_is_refused(live_visitor):
    form = selfie_form(live_visitor, data_for=lambda index, step: b"GIF89a not really" if index == 0 else jpeg())

    response = live_visitor.client.post("/flow/selfie", form)

    assert_refused(live_visitor, response, 400, "not a picture we can read", "initiated")


def test_a_selfie_taken_for_an_older_challenge_is_refused(live_visitor):
    form = selfie_form(live_visitor)
    for _ in range(50):  # another tab shows the page and gets a new random challenge
        live_visitor.client.get("/flow/selfie")
        if live_visitor.session.liveness_challenge != form["challenge"].split(","):
            break

    response = live_visitor.client.post("/flow/selfie", form)

    assert_refused(live_visitor, response, 409, "instructions changed", "initiated")


def test_too_many_selfie_frames_are_refused(live_visitor):
    response = live_visitor.client.post("/flow/selfie", selfie_form(live_visitor, frames_per_step=9))

    assert response.status_code == 413
    assert live_visitor.session.status == "initiated"


def test_a_selfie_with_a_bomb_frame_is_refused(live_visitor):
    bomb = png_bomb()
    form = selfie_form(live_visitor, data_for=lambda index, step: bomb if index == 1 else jpeg())

    response = live_visitor.client.post("/flow/selfie", form)

    assert_refused(live_visitor, response, 400, "larger than 25 megapixels", "initiated")


def test_a_selfie_request_announcing_more_than_four_full_size_photos_is_refused_unread(live_visitor):
    live_visitor.client.get("/flow/selfie")

    response = live_visitor.client.post(
        "/flow/selfie",
        data=b"--x--",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(41 * 1024 * 1024),
    )

    assert_refused(live_visitor, response, 413, "too large to send together", "initiated")


def test_the_queued_analysis_shows_no_picture_to_monitoring(api, settings):
    # Flower, `celery inspect` and task events show a message's `argsrepr`; Celery fills it with the
    # first KiB of the arguments, which here are the pictures themselves.
    import base64
    import json

    import redis

    from tests.support.flow import open_flow

    selfie_visitor, document_visitor = open_flow(api), open_flow(api)
    for status in ("processing", "requires_doc"):
        session_transition(session_id=document_visitor.session_id, to=status, cause="test")
    selfie_visitor.client.post("/flow/selfie", selfie_form(selfie_visitor))
    post_document(document_visitor, jpeg(800, 600))

    from sessions_api.tasks import analysis_queue_of

    # Both sessions are the same tenant's, sent from the same address.
    queue = analysis_queue_of(selfie_visitor.session.tenant_id, TEST_CLIENT_ADDRESS)
    messages = [json.loads(raw) for raw in redis.Redis.from_url(settings.REDIS_URL).lrange(queue, 0, -1)]
    assert {message["headers"]["task"] for message in messages} >= {
        "sessions_api.tasks.selfie_analyse",
        "sessions_api.tasks.document_analyse",
    }
    jpeg_start = base64.b64encode(jpeg()[:30]).decode()[:20]
    for message in messages:
        shown = message["headers"]["argsrepr"] + message["headers"]["kwargsrepr"]
        assert jpeg_start not in shown and "ses_" in shown
