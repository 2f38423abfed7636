"""Pictures that cost more than they weigh (issue 45, W1), through the document page: refused at the upload from
their headers when their decode is over budget, else decoded reduced by the worker and judged like any other."""

import pytest

from tests.support import crafted_pictures
from tests.support.faces import challenge_frames
from tests.support.flow import analysed, open_flow, post_document_with_head_turns
from tests.support.uploads import post_document

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # passporteye on scikit-image 0.26


@pytest.mark.parametrize(
    ("name", "picture"),
    [
        ("document.webp", lambda: crafted_pictures.lossless_webp(5000, 5000)),
        ("document.jpg", lambda: crafted_pictures.repeated_scan_jpeg(2000, 2000, repeats=200)),
        ("document.jpg", lambda: crafted_pictures.repeated_scan_jpeg(5000, 5000, repeats=30, luma=True)),
        ("document.png", lambda: crafted_pictures.deep_rgba_png(5000, 5000)),
    ],
)
def test_a_picture_over_the_decode_budget_is_refused_at_the_upload_with_its_reason(document_visitor, name, picture):
    response = post_document(document_visitor, picture(), name)

    assert response.status_code == 400
    assert "The picture is too complex to check" in response.content.decode()
    session = document_visitor.session
    assert (session.status, session.document_attempts, session.refused_uploads) == ("requires_doc", 0, 1)


@pytest.mark.parametrize(
    "picture",
    [
        lambda: crafted_pictures.odd_width_jpeg(4999, 5000),
        lambda: crafted_pictures.grey16_png(5000, 5000),
        lambda: crafted_pictures.repeated_scan_jpeg(5000, 5000, repeats=80),
    ],
)
def test_a_costly_picture_within_the_budget_is_decoded_by_the_worker_and_judged(api, celery_worker, picture):
    visitor = open_flow(api)
    visitor.client.post("/flow/no-camera")

    post_document_with_head_turns(visitor, picture(), challenge_frames)
    session = analysed(visitor)

    # Read (it holds no document), not cut off by the analysis' time limit.
    assert (session.status, session.document_attempts) == ("requires_doc", 1)
    assert "We could not read the document." in visitor.client.get("/flow/document").content.decode()
