"""The analysis pipeline end to end: flow upload -> Celery worker -> real checks -> decision -> stored numbers only.

These run the real checks (face engine, liveness, document reader) in a real in-thread Celery
worker on the real Redis broker, with synthetic faces and documents from tests/support.
"""

import base64
import datetime
import json
import tempfile
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from PIL import Image

from sessions_api.models import SessionEvent
from tenants.models import Tenant
from tests.factories import session_past_expiry
from tests.support.documents import aamva_payload, encode, licence_front, mrz_card, pdf417_card, td3_lines
from tests.support.faces import astronaut_portrait, challenge_frames, still_frames
from tests.support.flow import (
    ANALYSIS_TIMEOUT,
    TEST_CLIENT_ADDRESS,
    analysed,
    head_turns_with_capture_record,
    open_flow,
    post_document,
    post_document_with_head_turns,
    post_selfie,
)
from tests.support.waiting import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")  # passporteye on scikit-image 0.26


@pytest.fixture
def image_dirs(monkeypatch, tmp_path):
    """A fresh temporary directory for everything in this process (worker thread included)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return [scratch, Path(settings.VAR_DIR)]


def image_files(directories) -> list[Path]:
    found = []
    for directory in directories:
        if not directory.exists():
            continue
        for path in directory.rglob("*"):
            if path.is_file():
                head = path.read_bytes()[:12]
                if head[:3] == b"\xff\xd8\xff" or head[:8] == b"\x89PNG\r\n\x1a\n" or head[8:12] == b"WEBP":
                    found.append(path)
    return found


def broker_holds(needle: bytes) -> bool:
    """Whether any key of the test Redis database (queues, unacked messages...) still contains `needle`."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    for key in client.scan_iter():
        kind = client.type(key)
        values = {
            b"string": lambda key: [client.get(key)],
            b"list": lambda key: client.lrange(key, 0, -1),
            b"hash": lambda key: list(client.hvals(key)),
            b"set": lambda key: list(client.smembers(key)),
            b"zset": lambda key: client.zrange(key, 0, -1),
        }.get(kind, lambda key: [])(key)
        if any(needle in (value or b"") for value in values):
            return True
    return False


def not_a_face(challenge):
    """Plain sky-blue pictures, a little different each, so they are neither faces nor one still."""
    return [
        (step, encode(Image.new("RGB", (480, 480), (100 + 20 * shade, 160, 220))))
        for step in challenge
        for shade in range(3)
    ]


def document_photo(birthdate: datetime.date, expiry="01012035") -> bytes:
    return encode(pdf417_card(aamva_payload(birth=birthdate.strftime("%m%d%Y"), expiry=expiry)))


def years_ago(years: int, extra_days: int = 30) -> datetime.date:
    today = timezone.now().date()
    return today.replace(year=today.year - years) - datetime.timedelta(days=extra_days)


def test_a_selfie_without_a_face_is_retaken_and_the_attempt_counted(api, celery_worker, image_dirs):
    visitor = open_flow(api)

    post_selfie(visitor, not_a_face)
    session = analysed(visitor)

    assert (session.status, session.selfie_attempts) == ("initiated", 1)
    page = visitor.client.get("/flow/selfie").content.decode()
    assert "Please try again." in page and "Attempt 2 of 3" in page
    assert "face" in page.split("Please try again.</strong>")[1].split("</p>")[0]
    assert api.get(f"/v1/sessions/{visitor.session_id}").json()["liveness"] is None
    assert image_files(image_dirs) == []


def test_the_third_failed_liveness_attempt_leads_to_the_document_step_without_the_wallet_unless_enabled(
    api, celery_worker
):
    visitor = open_flow(api, cancel_url="https://shop.example.com/cancel")

    for attempt in range(1, 4):
        # A replayed still picture for every head-turn step: not a live person.
        post_selfie(visitor, still_frames)
        session = analysed(visitor)
        assert session.selfie_attempts == attempt

    body = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("requires_doc", None)
    assert body["liveness"]["isLive"] is False and body["liveness"]["livenessScore"] < 0.5
    assert body["ageEstimation"] is None
    assert visitor.client.get("/flow/selfie")["Location"] == "/flow/document"  # no fourth selfie
    page = visitor.client.get("/flow/document").content.decode()
    assert "We could not confirm your age from a selfie after 3 attempts" in page
    assert 'name="document"' in page and "data-digital-id" not in page  # this tenant has no digital ID


def test_a_live_adult_is_approved_by_age_estimation_and_no_image_is_kept(
    api, celery_worker, image_dirs, age_policy_file
):
    age_policy_file({10: 12.0})  # the synthetic adult's face reads well over 12
    visitor = open_flow(api, age_limit=10, notification_url="https://partner.example.com/hook")

    frames = post_selfie(visitor, challenge_frames)
    session = analysed(visitor)

    body = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "age_estimation"), (
        SessionEvent.objects.filter(session=session).last().cause
    )
    assert body["liveness"]["isLive"] is True
    assert body["ageEstimation"]["ageLimit"] == 10 and body["ageEstimation"]["estimatedAge"] >= 10
    # The images existed only in memory and in the task message, which is gone once acknowledged.
    wait_until(lambda: not broker_holds(base64.b64encode(frames[0][1])[:4000]), timeout=10)
    assert image_files(image_dirs) == []


def test_a_face_estimated_below_the_policy_threshold_needs_a_document_which_then_approves(
    api, celery_worker, image_dirs, age_policy_file
):
    age_policy_file({18: 90.0})  # no face of the synthetic adult reads 90
    visitor = open_flow(api, age_limit=18)

    post_selfie(visitor, challenge_frames)
    assert analysed(visitor).status == "requires_doc", (
        SessionEvent.objects.filter(session_id=visitor.session_id).last().cause
    )
    assert visitor.client.get("/flow/status").json()["next"] == "/flow/document"
    # A driving licence: its front with the holder's portrait, its back with the barcode. No second round of head
    # turns: the portrait is compared with the selfie's face, kept sealed until the session ends.
    front, photo = encode(licence_front(astronaut_portrait()[0])), document_photo(years_ago(30))
    assert 'name="challenge"' not in visitor.client.get("/flow/document").content.decode()
    assert post_document(visitor, front, back=photo).status_code == 303
    session = analysed(visitor)

    body = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["validateDoc"]["trueAge"] == 30
    assert body["validateDoc"]["birthdate"] == years_ago(30).isoformat() + "T00:00:00.000Z"
    assert body["validateDoc"]["livenessChecked"] is True and body["validateDoc"]["holderMatch"]["passed"] is True
    assert body["liveness"]["isLive"] is True
    assert 0.0 <= body["ageEstimation"]["ageConfidence"] <= 1.0 and body["ageEstimation"]["estimatedAge"] < 90
    assert session.document_attempts == 1
    assert not broker_holds(base64.b64encode(photo)[:4000]) and not broker_holds(base64.b64encode(front)[:4000])
    assert image_files(image_dirs) == []


def test_with_the_presence_policy_off_an_underage_document_alone_denies(api, onboarded, celery_worker):
    Tenant.objects.update(document_presence_required=False)  # the onboarded tenant
    visitor = open_flow(api, age_limit=18)
    visitor.client.post("/flow/no-camera")

    photo = document_photo(years_ago(17))
    visitor.client.post("/flow/document", {"document": SimpleUploadedFile("dl.jpg", photo, "image/jpeg")})

    body = api.get(f"/v1/sessions/{analysed(visitor).id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("denied", "underage_document")
    assert body["validateDoc"]["trueAge"] == 17
    assert (body["validateDoc"]["livenessChecked"], body["validateDoc"]["holderMatch"], body["liveness"]) == (
        False,
        None,
        None,
    )


def test_an_unreadable_document_is_retaken_with_its_message(api, celery_worker, image_dirs):
    visitor = open_flow(api)
    visitor.client.post("/flow/no-camera")

    blank = encode(Image.new("RGB", (900, 600), (235, 235, 230)))
    post_document_with_head_turns(visitor, blank, challenge_frames)
    session = analysed(visitor)

    assert (session.status, session.document_attempts) == ("requires_doc", 1)
    page = visitor.client.get("/flow/document").content.decode()
    assert "We could not read the document." in page and "Attempt 2 of 3" in page
    # OCR ran through temporary files; none of them remains.
    assert image_files(image_dirs) == []
    assert not any(Path(tempfile.gettempdir()).iterdir())


def test_a_decision_on_a_session_cancelled_meanwhile_is_dropped(api, celery_worker):
    visitor = open_flow(api)
    frames = post_selfie(visitor, challenge_frames)

    visitor.client.post("/flow/cancel")

    # Acknowledged (acks_late) only once the task has finished, whether it analysed or skipped.
    wait_until(lambda: not broker_holds(base64.b64encode(frames[0][1])[:4000]), timeout=ANALYSIS_TIMEOUT)
    session = visitor.session
    assert (session.status, session.reason, session.selfie_attempts) == ("denied", "cancelled", 0)
    assert [e.to_status for e in SessionEvent.objects.filter(session=session)] == ["processing", "denied"]


def run_the_queued_analysis(visitor):
    """Do what a worker does with the analysis message the flow queued: read it off the real broker and run it."""

    from ageverify.celery import app
    from sessions_api.tasks import analysis_queue_of

    queue = analysis_queue_of(visitor.session.tenant_id, TEST_CLIENT_ADDRESS)
    message = json.loads(redis.Redis.from_url(settings.REDIS_URL).rpop(queue))
    args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
    app.tasks[message["headers"]["task"]].apply(args=args, kwargs=kwargs)


def test_a_session_that_expires_while_its_selfie_waits_for_analysis_ends_expired_not_decided(api, age_policy_file):
    # Whether the expiry sweep or the worker came first must not change the outcome.
    age_policy_file({10: 12.0})  # the face would otherwise be approved
    visitor = open_flow(api, age_limit=10)
    post_selfie(visitor, challenge_frames)
    session_past_expiry(visitor.session_id, ago=datetime.timedelta(0))

    run_the_queued_analysis(visitor)

    session = visitor.session
    assert (session.status, session.reason) == ("denied", "expired")
    assert [e.to_status for e in SessionEvent.objects.filter(session=session)] == ["processing", "denied"]


def test_a_data_page_printing_another_birth_date_than_its_mrz_is_retaken(api, celery_worker):
    visitor = open_flow(api, age_limit=18)
    visitor.client.post("/flow/no-camera")
    birth = years_ago(30)
    lines = td3_lines(birth=birth.strftime("%y%m%d"), expiry="350101")
    forged = (birth.replace(year=birth.year - 4).strftime("%d.%m.%Y"), "01.01.2035")  # the print says 34

    post_document_with_head_turns(
        visitor, encode(mrz_card(lines, portrait=astronaut_portrait()[0], printed=forged)), challenge_frames
    )
    session = analysed(visitor)

    assert (session.status, session.document_attempts) == ("requires_doc", 1)
    assert "dates printed on your document do not match" in visitor.client.get("/flow/document").content.decode()


def _selfie_with_capture_record(visitor, *, label: str, reflecting: bool = True) -> None:
    form = head_turns_with_capture_record(visitor, "/flow/selfie", label=label, reflecting=reflecting)
    assert visitor.client.post("/flow/selfie", form).status_code == 303


def test_a_virtual_camera_is_refused_unless_the_tenant_only_flags_it(api, onboarded, celery_worker, age_policy_file):
    age_policy_file({10: 12.0})
    refused = open_flow(api, age_limit=10)
    _selfie_with_capture_record(refused, label="OBS Virtual Camera")
    session = analysed(refused)
    assert (session.status, session.selfie_attempts) == ("initiated", 1)  # not live: try again
    assert "live person" in SessionEvent.objects.filter(session=session).last().message

    Tenant.objects.filter(pk=onboarded.tenant.pk).update(liveness_flag_only=["virtualCamera"])
    flagged = open_flow(api, age_limit=10)
    _selfie_with_capture_record(flagged, label="OBS Virtual Camera")
    analysed(flagged)

    body = api.get(f"/v1/sessions/{flagged.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "age_estimation")
    assert body["liveness"]["isLive"] is True and body["liveness"]["signals"] == ["virtualCamera"]


def test_a_capture_not_lit_by_the_issued_colours_is_refused_unless_the_tenant_only_flags_it(
    api, onboarded, celery_worker, age_policy_file
):
    age_policy_file({10: 12.0})
    refused = open_flow(api, age_limit=10)
    _selfie_with_capture_record(refused, label="Integrated Camera", reflecting=False)
    session = analysed(refused)
    assert len(session.liveness_flash) == 3 * len(session.liveness_challenge)
    assert (session.status, session.selfie_attempts) == ("initiated", 1)

    Tenant.objects.filter(pk=onboarded.tenant.pk).update(liveness_flag_only=["flash"])
    flagged = open_flow(api, age_limit=10)
    _selfie_with_capture_record(flagged, label="Integrated Camera", reflecting=False)
    analysed(flagged)

    body = api.get(f"/v1/sessions/{flagged.session_id}").json()
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "age_estimation")
    assert body["liveness"]["isLive"] is True and body["liveness"]["signals"] == ["flash"]


def test_a_capture_lit_by_the_issued_colours_passes_without_signals(api, onboarded, celery_worker, age_policy_file):
    age_policy_file({10: 12.0})
    visitor = open_flow(api, age_limit=10)
    _selfie_with_capture_record(visitor, label="Integrated Camera")
    analysed(visitor)

    body = api.get(f"/v1/sessions/{visitor.session_id}").json()
    assert body["session"]["status"] == "approved"
    assert body["liveness"]["isLive"] is True and body["liveness"]["signals"] == []
