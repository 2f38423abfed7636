"""The document page's head turns (presence policy) are judged on their capture record as the selfie's are.

The real checks in a real Celery worker, as in test_pipeline. The user arrives at the document step without a
selfie ("Use an ID document instead"), then sends the passport page and the head turns in the page's one form,
with the capture record its camera panel sends (docs/pad.md): the camera's label, the frames' times and the
screen colours shown.
"""

import base64
import json

import pytest
import redis
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from sessions_api.models import SessionEvent
from tenants.models import Tenant
from tests.flow.test_holder_evidence import passport
from tests.support.flow import TEST_CLIENT_ADDRESS, analysed, head_turns_with_capture_record, open_flow

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # passporteye on scikit-image 0.26


def _document_with_capture_record(api, *, label: str, reflecting: bool = True):
    visitor = open_flow(api, age_limit=18)
    visitor.client.post("/flow/no-camera")
    form = head_turns_with_capture_record(visitor, "/flow/document", label=label, reflecting=reflecting)
    form["document"] = SimpleUploadedFile("document.jpg", passport(), content_type="image/jpeg")
    assert visitor.client.post("/flow/document", form).status_code == 303
    return visitor


def test_the_document_page_issues_screen_colours_and_says_it_will_flash(api):
    visitor = open_flow(api, age_limit=18)
    visitor.client.post("/flow/no-camera")

    page = visitor.client.get("/flow/document").content.decode()

    flash = visitor.session.liveness_flash
    assert len(flash) == 3 * len(visitor.session.liveness_challenge)
    assert f'data-flash value="{",".join(flash)}"' in page
    assert "data-flash-note" in page and "upload one photo for each instruction instead" in page


@pytest.mark.parametrize(
    ("label", "reflecting", "signal"),
    [("OBS Virtual Camera", True, "virtualCamera"), ("Integrated Camera", False, "flash")],
    ids=["virtual-camera", "not-lit-by-the-issued-colours"],
)
def test_document_head_turns_that_fire_a_signal_are_refused_unless_the_tenant_only_flags_it(
    api, onboarded, celery_worker, label, reflecting, signal
):
    refused = _document_with_capture_record(api, label=label, reflecting=reflecting)
    session = analysed(refused)
    assert (session.status, session.document_attempts) == ("requires_doc", 1)  # not live: the head turns again
    assert "live person" in SessionEvent.objects.filter(session=session).last().message
    page = refused.client.get("/flow/document").content.decode()
    assert 'data-picture="kept"' in page and 'data-head-turns="after-document"' in page  # only the head turns again

    Tenant.objects.filter(pk=onboarded.tenant.pk).update(liveness_flag_only=[signal])
    flagged = _document_with_capture_record(api, label=label, reflecting=reflecting)
    analysed(flagged)

    body = api.get(f"/v1/sessions/{flagged.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["validateDoc"]["livenessChecked"] is True and body["validateDoc"]["holderMatch"]["passed"] is True
    assert body["liveness"]["isLive"] is True and body["liveness"]["signals"] == [signal]


def test_document_head_turns_lit_by_the_issued_colours_pass_without_signals(api, celery_worker):
    visitor = _document_with_capture_record(api, label="Integrated Camera")
    analysed(visitor)

    body = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["liveness"]["isLive"] is True and body["liveness"]["signals"] == []


def test_a_document_analysis_queued_without_a_capture_record_by_the_previous_release_is_still_analysed(api):
    from ageverify.celery import app
    from sessions_api.tasks import analysis_queue_of

    visitor = _document_with_capture_record(api, label="OBS Virtual Camera")  # refused, were the record read
    queue = analysis_queue_of(visitor.session.tenant_id, TEST_CLIENT_ADDRESS)
    message = json.loads(redis.Redis.from_url(settings.REDIS_URL).rpop(queue))
    args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
    assert args[4]["label"] == "OBS Virtual Camera"

    # The message as the previous release queued it: the session, the pictures, the frames; no capture record.
    app.tasks[message["headers"]["task"]].apply(args=args[:4], kwargs=kwargs)

    body = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["liveness"]["isLive"] is True and body["liveness"]["signals"] == []
