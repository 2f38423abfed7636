"""The document step's holder check asks again only for the half that failed; what passed is kept until the end.

The real checks in a real Celery worker, as in test_pipeline. The adult whose selfie passed liveness but whose
face was not enough sends only the document: its portrait is compared with that selfie's face. On the document
path, a retake asks only for the head turns when the document passed its checks, only for the document when
the head turns passed. What a session keeps for this is erased when it ends (docs/adult-path.md).
"""

import datetime
import io

import pytest
from django.core.management import call_command
from PIL import ImageFilter

from sessions_api.evidence import Evidence, LiveFace, evidence_keep, session_evidence
from sessions_api.models import SessionEvent, VerificationSession
from tests.factories import finished_session
from tests.support.documents import encode, mrz_card, td3_lines
from tests.support.faces import PORTRAITS, challenge_frames, still_frames
from tests.support.flow import (
    analysed,
    open_flow,
    post_document,
    post_document_with_head_turns,
    post_head_turns,
    post_selfie,
)

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # passporteye on scikit-image 0.26


def years_ago(years: int) -> datetime.date:
    today = datetime.date.today() - datetime.timedelta(days=30)
    return today.replace(year=today.year - years, day=min(today.day, 28))


def passport(*, years: int = 30, person: str = "astronaut", expiry: datetime.date | None = None) -> bytes:
    birth, expiry = years_ago(years), expiry or datetime.date(2035, 1, 1)
    lines = td3_lines(birth=birth.strftime("%y%m%d"), expiry=expiry.strftime("%y%m%d"))
    printed = (birth.strftime("%d.%m.%Y"), expiry.strftime("%d.%m.%Y"))
    return encode(mrz_card(lines, portrait=PORTRAITS[person]()[0], printed=printed))


def seal_of(visitor) -> str:
    return VerificationSession.objects.values_list("evidence_seal", flat=True).get(pk=visitor.session_id)


def processing_causes(visitor) -> list[str]:
    return [e.cause for e in SessionEvent.objects.filter(session_id=visitor.session_id, to_status="processing")]


@pytest.fixture
def face_not_enough(api, celery_worker, age_policy_file):
    """A live adult at limit 18 whose selfie passed liveness but whose face the policy does not approve."""
    age_policy_file({18: 90.0})  # no face of the synthetic adult reads 90
    visitor = open_flow(api, age_limit=18)
    post_selfie(visitor, challenge_frames)
    assert analysed(visitor).status == "requires_doc"
    return visitor


def test_after_a_selfie_whose_face_is_not_enough_the_document_alone_finishes_the_holder_check(api, face_not_enough):
    visitor = face_not_enough
    page = visitor.client.get("/flow/document").content.decode()
    assert 'data-head-turns="reused"' in page and 'data-picture="needed"' in page
    assert "you do not turn your head again" in page
    assert 'name="challenge"' not in page and "Then: turn your head" not in page and 'name="document"' in page
    assert seal_of(visitor).startswith("sealed:v1:")

    response = post_document(visitor, passport())

    assert response.status_code == 303
    session = analysed(visitor)
    body = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["validateDoc"]["livenessChecked"] is True and body["validateDoc"]["holderMatch"]["passed"] is True
    assert body["liveness"]["isLive"] is True and body["ageEstimation"]["estimatedAge"] < 90
    assert processing_causes(visitor) == ["selfie submitted", "document submitted"]
    assert session.document_attempts == 1 and seal_of(visitor) == ""


def test_the_document_step_after_a_selfie_refuses_an_empty_form_and_ignores_head_turns_sent_anyway(
    api, face_not_enough
):
    visitor = face_not_enough

    refused = post_document(visitor)

    assert refused.status_code == 400 and "Choose or take a picture of your document first." in refused.content.decode()
    # A stale page that still sends head turns with the document: they are dropped, the kept face is used.
    post_document_with_head_turns(visitor, passport(), still_frames)
    body = api.get(f"/v1/sessions/{analysed(visitor).id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")


def test_another_persons_portrait_asks_for_both_halves_again_and_forgets_the_kept_face(face_not_enough):
    visitor = face_not_enough

    post_document(visitor, passport(person="hopper"))

    assert analysed(visitor).status == "requires_doc"
    page = visitor.client.get("/flow/document").content.decode()
    assert "does not look like the photo on the document" in page
    assert 'data-head-turns="after-document"' in page and 'name="challenge"' in page and 'name="document"' in page
    assert seal_of(visitor) == ""


def test_a_blurred_portrait_asks_for_a_sharper_document_photo_without_spending_an_attempt(face_not_enough):
    visitor = face_not_enough
    lines = td3_lines(birth=years_ago(30).strftime("%y%m%d"), expiry="350101")
    printed = (years_ago(30).strftime("%d.%m.%Y"), "01.01.2035")
    page = mrz_card(lines, portrait=PORTRAITS["astronaut"]()[0], printed=printed)
    # Blurred only over the portrait: the machine-readable zone still reads, the face can no longer be matched.
    portrait_box = (60, 190, 460, 640)
    page.paste(page.crop(portrait_box).filter(ImageFilter.GaussianBlur(6)), portrait_box[:2])

    post_document(visitor, encode(page))

    session = analysed(visitor)
    assert session.status == "requires_doc" and session.document_attempts == 0
    shown = visitor.client.get("/flow/document").content.decode()
    assert "too blurred to compare with you" in shown
    assert 'data-head-turns="reused"' in shown  # the passed head turns are still kept

    post_document(visitor, passport())

    assert analysed(visitor).status == "approved" and visitor.session.document_attempts == 1


def test_a_face_kept_by_an_earlier_version_without_its_age_asks_for_the_head_turns_again(face_not_enough):
    # Sealed before the holder match read the faces' age: 128 numbers, no age. It is not compared without one.
    visitor = face_not_enough
    kept = session_evidence(visitor.session)
    evidence_keep(
        session_id=visitor.session_id,
        evidence=Evidence(live_face=LiveFace(kept.live_face.descriptor[:128], kept.live_face.liveness_score)),
    )

    post_document(visitor, passport())

    assert analysed(visitor).status == "requires_doc"
    assert (
        "We could not see your face clearly during the head turns"
        in visitor.client.get("/flow/document").content.decode()
    )


def test_a_kept_face_is_erased_when_the_session_ends(face_not_enough):
    visitor = face_not_enough
    assert seal_of(visitor)

    visitor.client.post("/flow/cancel")

    assert visitor.session.status == "denied" and seal_of(visitor) == ""


def test_a_seal_copied_onto_another_session_does_not_open_there(api, face_not_enough):
    other = open_flow(api, age_limit=18)
    other.client.post("/flow/no-camera")
    VerificationSession.objects.filter(pk=other.session_id).update(evidence_seal=seal_of(face_not_enough))

    page = other.client.get("/flow/document").content.decode()

    assert 'data-head-turns="after-document"' in page and 'name="challenge"' in page


def test_document_first_a_failed_liveness_keeps_the_document_and_asks_only_for_the_head_turns(api, celery_worker):
    visitor = open_flow(api, age_limit=18)
    visitor.client.post("/flow/no-camera")
    post_document_with_head_turns(visitor, passport(), still_frames)  # a replayed still: not live
    assert analysed(visitor).status == "requires_doc"

    page = visitor.client.get("/flow/document").content.decode()
    assert "We could not confirm that this was a live person" in page
    assert 'data-picture="kept"' in page and 'data-head-turns="after-document"' in page
    assert 'name="document"' not in page and 'name="challenge"' in page
    assert "<h1>Turn your head in front of the camera</h1>" in page
    post_head_turns(visitor, challenge_frames)

    session = analysed(visitor)
    body = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["validateDoc"]["trueAge"] == 30 and body["validateDoc"]["holderMatch"]["passed"] is True
    assert body["liveness"]["isLive"] is True and body["ageEstimation"] is None
    assert session.document_attempts == 2 and seal_of(visitor) == ""


def test_head_turns_failed_three_times_on_the_document_path_end_liveness_failed_without_a_word_of_a_selfie(
    api, celery_worker
):
    visitor = open_flow(api, age_limit=18)
    visitor.client.post("/flow/no-camera")
    post_document_with_head_turns(visitor, passport(), still_frames)
    for _ in range(2):
        assert analysed(visitor).status == "requires_doc"
        post_head_turns(visitor, still_frames)

    assert (analysed(visitor).status, visitor.session.reason) == ("denied", "liveness_failed")
    shown = visitor.client.get("/flow/result").content.decode().split("<main", 1)[1].split("</main>", 1)[0]
    assert "We could not confirm that a live person was in front of the camera during the head turns." in shown
    assert "selfie" not in shown.lower() and seal_of(visitor) == ""


def test_document_first_an_expired_document_keeps_the_passed_head_turns_and_asks_only_for_another_document(
    api, celery_worker
):
    visitor = open_flow(api, age_limit=18)
    visitor.client.post("/flow/no-camera")
    expired = datetime.date.today() - datetime.timedelta(days=40)
    post_document_with_head_turns(visitor, passport(expiry=expired), challenge_frames)
    assert analysed(visitor).status == "requires_doc"

    page = visitor.client.get("/flow/document").content.decode()
    assert "This document has expired." in page
    assert 'data-picture="needed"' in page and 'data-head-turns="reused"' in page and 'name="challenge"' not in page
    post_document(visitor, passport())

    body = api.get(f"/v1/sessions/{analysed(visitor).id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["validateDoc"]["livenessChecked"] is True and body["validateDoc"]["holderMatch"]["passed"] is True


def test_the_retention_purge_erases_a_seal_left_on_a_final_session(onboarded):
    session = finished_session(onboarded.tenant, status="approved")
    VerificationSession.objects.filter(pk=session.pk).update(evidence_seal="sealed:v1:left-by-an-older-release")

    call_command("purge_sessions", stdout=io.StringIO())

    assert VerificationSession.objects.get(pk=session.pk).evidence_seal == ""
