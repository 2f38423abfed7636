"""The hosted flow as an end user's browser goes through it: the session's link opened, its cookie kept."""

import json
import random
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from sessions_api.models import Reason, Status, VerificationSession
from sessions_api.state_machine import Results, session_transition
from tests.support.faces import challenge_frames
from tests.support.pad import page_times, reflect
from tests.support.waiting import wait_until

ANALYSIS_TIMEOUT = 90  # seconds the real checks may take on this machine
# The address Django's test client sends from (REMOTE_ADDR): with the tenant, it chooses the analysis queue.
TEST_CLIENT_ADDRESS = "127.0.0.1"


def start_path(verification_url: str) -> str:
    """The verificationUrl without its origin (tests speak to the Django test server)."""
    parts = urlsplit(verification_url)
    return f"{parts.path}?{parts.query}"


@dataclass
class Visitor:
    """An end user's browser in the flow of one session."""

    client: Client
    session_id: str
    created: dict  # the session object POST /v1/sessions returned

    @property
    def session(self) -> VerificationSession:
        return VerificationSession.objects.select_related("tenant").get(pk=self.session_id)


def open_flow(api, client: Client | None = None, **fields) -> Visitor:
    created = api.create_session(**fields)
    client = client or Client()
    response = client.get(start_path(created["verificationUrl"]))
    assert response.status_code == 303, response.content
    return Visitor(client=client, session_id=created["sessionId"], created=created)


def approve(session_id: str, *, reason: str = Reason.DOCUMENT, true_age: int = 19) -> None:
    """The session approved as its worker would approve it: by a document read at `true_age`, or by a face."""
    results = None
    if reason == Reason.DOCUMENT:
        today = timezone.now().date()
        results = Results(
            document={
                "document_kind": "passport",
                "birthdate": today.replace(year=today.year - true_age, day=1),
                "true_age": true_age,
            }
        )
    elif reason == Reason.AGE_ESTIMATION:
        results = Results(age_estimation={"estimated_age": 30.0, "age_confidence": 0.99})
    session_transition(session_id=session_id, to=Status.PROCESSING, cause="test")
    session_transition(session_id=session_id, to=Status.APPROVED, reason=reason, cause="test", results=results)


def post_selfie(visitor, frames_for, frames_per_step=3):
    """Show the selfie page (which issues the challenge), then send the frames made for that challenge."""
    form, frames = _head_turns(visitor, "/flow/selfie", frames_for, frames_per_step)
    response = visitor.client.post("/flow/selfie", form)
    assert response.status_code == 303, response.content.decode()
    return frames


def post_document_with_head_turns(visitor, document: bytes, frames_for, frames_per_step=3, back: bytes | None = None):
    """Show the document page (which, under the presence policy, issues a challenge), then send the document's
    picture(s) and the frames made for that challenge, as the page's one form does."""
    form, frames = _head_turns(visitor, "/flow/document", frames_for, frames_per_step)
    form["document"] = SimpleUploadedFile("document.jpg", document, content_type="image/jpeg")
    if back is not None:
        form["document_back"] = SimpleUploadedFile("back.jpg", back, content_type="image/jpeg")
    response = visitor.client.post("/flow/document", form)
    assert response.status_code == 303, response.content.decode()
    return frames


def post_document(visitor, document: bytes | None = None, back: bytes | None = None):
    """Show the document page, then send only the document's picture(s), as its form does when the session
    keeps a passed head-turn capture (or nothing at all, to send an empty form)."""
    visitor.client.get("/flow/document")
    form = {}
    if document is not None:
        form["document"] = SimpleUploadedFile("document.jpg", document, content_type="image/jpeg")
    if back is not None:
        form["document_back"] = SimpleUploadedFile("back.jpg", back, content_type="image/jpeg")
    return visitor.client.post("/flow/document", form)


def post_head_turns(visitor, frames_for, frames_per_step=3):
    """Show the document page, then send only the head turns, as its form does when the session keeps the
    document read at an earlier attempt."""
    form, frames = _head_turns(visitor, "/flow/document", frames_for, frames_per_step)
    response = visitor.client.post("/flow/document", form)
    assert response.status_code == 303, response.content.decode()
    return frames


def _head_turns(visitor, page: str, frames_for, frames_per_step: int) -> tuple[dict, list]:
    visitor.client.get(page)
    challenge = visitor.session.liveness_challenge
    frames = frames_for(challenge)
    form = {"challenge": ",".join(challenge)}
    for index, step in enumerate(challenge):
        step_frames = frames[index * frames_per_step : (index + 1) * frames_per_step]
        assert {label for label, _ in step_frames} == {step}
        form[f"frame_{index}_{step}"] = [
            SimpleUploadedFile(f"{step}-{n}.jpg", data, content_type="image/jpeg")
            for n, (_, data) in enumerate(step_frames)
        ]
    return form, frames


def head_turns_with_capture_record(visitor, page: str, *, label: str, reflecting: bool = True) -> dict:
    """The head-turn form of `page` (which issues the challenge, its timing and its screen colours) as the camera
    panel sends it: the frames of a genuine head turn, lit by the issued colours (`reflecting`; else as recorded
    before they existed), and its capture record with `label` as the camera's."""
    visitor.client.get(page)
    session = visitor.session
    challenge, flash = session.liveness_challenge, session.liveness_flash
    frames = challenge_frames(challenge)
    if reflecting:
        rng = random.Random(1)
        frames = [(step, reflect(data, colour, 0.04, rng)) for (step, data), colour in zip(frames, flash)]
    form = {
        "challenge": ",".join(challenge),
        "capture": json.dumps({"label": label, "times": page_times(session.liveness_timing), "colors": flash}),
    }
    for index, step in enumerate(challenge):
        form[f"frame_{index}_{step}"] = [
            SimpleUploadedFile(f"{step}-{n}.jpg", data, content_type="image/jpeg")
            for n, (_, data) in enumerate(frames[index * 3 : (index + 1) * 3])
        ]
    return form


def analysed(visitor) -> VerificationSession:
    wait_until(lambda: visitor.session.status != "processing", timeout=ANALYSIS_TIMEOUT)
    return visitor.session


def save_right_give(visitor) -> None:
    """Give the visitor's browser the right to save a pass that its approving submission would have set
    (tests that approve through the state machine; test_save_right.py has the submissions themselves)."""
    from age_passes.services import age_pass_save_right_issue
    from flow.age_pass import SAVE_RIGHT_COOKIE

    visitor.client.cookies[SAVE_RIGHT_COOKIE] = age_pass_save_right_issue(session=visitor.session)
