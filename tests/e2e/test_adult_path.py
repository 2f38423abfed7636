"""The adult's path at age limit 18 in a real browser: what the user does, counted (issue 26, item 5).

Live sessions, the real checks in a real Celery worker, the scripted camera of tests.support.camera: the
astronaut turning their head in front of the front camera, and a passport page (with the astronaut's
portrait) in front of the rear camera. `walk` goes from the verificationUrl to the result page the way a
user would, doing whatever each page asks, and counts the taps (TAP_COUNTER_JS), the camera starts, the
seconds the head-turn captures take (the page's own timers) and the analyses' seconds (the session's
history). Each test prints one line of these numbers (pytest -s shows them) and appends it to
test-artifacts/adult-path.txt. Screenshots: test-artifacts/adult-*.png.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import expect

from sessions_api.models import SessionEvent
from tests.e2e.conftest import ARTIFACTS, clocked_page
from tests.e2e.test_live_flow import (
    ANALYSIS_TIMEOUT_MS,
    finished,
    frontal_face,
    passport_page,
    return_urls,
    take_selfie,
    turning_face,
    years_ago,
)
from tests.support.camera import SCRIPTED_CAMERA_JS, TAP_COUNTER_JS, data_url, tally
from tests.support.documents import encode
from tests.support.faces import astronaut_portrait

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::FutureWarning")]

SELFIE_JS = Path(__file__).resolve().parents[2] / "static" / "flow" / "selfie.js"


@pytest.fixture
def counted_page(browser):
    """A page with the scripted camera whose taps and camera starts are counted across its pages."""
    page = clocked_page(browser, SCRIPTED_CAMERA_JS + "\n" + TAP_COUNTER_JS)
    yield page
    page.context.close()


def capture_seconds(page, steps: int) -> float:
    """The page time the head turns take: the step durations the server issued (static/flow/selfie.js)."""
    issued = page.locator("[data-timing]").first.input_value() if page.locator("[data-timing]").count() else ""
    durations = [int(ms) for ms in issued.split(",") if ms]
    if not durations:  # a page without issued timing follows selfie.js's default step
        default = int(re.search(r"var DEFAULT_STEP_MS = (\d+);", SELFIE_JS.read_text()).group(1))
        durations = [default] * steps
    return sum(durations[:steps]) / 1000


@dataclass
class Walk:
    session_id: str
    pages: list[str] = field(default_factory=list)
    head_turn_captures: int = 0
    capture_seconds: float = 0.0
    analysis_seconds: list[float] = field(default_factory=list)
    taps: int = 0
    cameras: list[str] = field(default_factory=list)

    def line(self, label: str) -> str:
        analysis = " + ".join(f"{seconds:.1f}" for seconds in self.analysis_seconds)
        return (
            f"{label}: {self.taps} taps, {self.head_turn_captures} head-turn capture(s), cameras {self.cameras}, "
            f"{self.capture_seconds:.1f} s of head turns + {analysis} s of analysis, pages {' > '.join(self.pages)}"
        )


def _page_name(page) -> str:
    return page.url.split("/flow/")[-1].split("?")[0] or "consent"


@functools.lru_cache(maxsize=8)
def unturned_face(challenge: tuple[str, ...]) -> list[list[str]]:
    """The astronaut facing the camera whatever each step asks (the light changing a little between pictures):
    a face that is there but does not turn, which liveness does not pass."""
    from PIL import ImageEnhance

    portrait, _ = astronaut_portrait()
    pictures = [data_url(encode(ImageEnhance.Brightness(portrait).enhance(0.8 + 0.15 * n))) for n in range(3)]
    return [pictures for _ in challenge]


def _load_camera(page, preview: str, challenge: list[str] | None, *, turning: bool = True) -> None:
    steps = (turning_face if turning else unturned_face)(tuple(challenge)) if challenge else []
    page.evaluate("([preview, steps]) => window.__fakeCamera.load(preview, steps)", [preview, steps])


def _head_turns(page, walk: Walk, *, path: str, camera_button: str) -> None:
    challenge = page.locator("input[name=challenge]").input_value().split(",")
    seconds = capture_seconds(page, len(challenge))
    take_selfie(page, scripted=True, path=path, camera_button=camera_button)
    walk.head_turn_captures += 1
    walk.capture_seconds += seconds


def _photograph_document(page, photo: dict) -> None:
    """The rear camera's panel: on, take, use, and no back (a passport's data page has it all)."""
    challenge = None
    if page.locator("input[name=challenge]").count():
        challenge = page.locator("input[name=challenge]").input_value().split(",")
    _load_camera(page, data_url(photo["buffer"]), challenge)
    panel = page.locator("[data-document] > [data-camera]")
    expect(panel).to_be_visible()
    panel.get_by_role("button", name="Turn on the camera").click()
    panel.get_by_role("button", name="Take photo").click()
    panel.get_by_role("button", name="Use this photo").click()
    panel.get_by_role("button", name="No back needed").click()


def walk(page, partner, base_url: str, *, subject: str, photo: dict | None = None, screenshot=None) -> Walk:
    """From the verificationUrl to the result page, doing what each page asks; returns what it took."""
    created = partner.create_session(subject=subject, age_limit=18, **return_urls(base_url))
    walked = Walk(session_id=created["sessionId"])
    photo = photo or passport_page(years_ago(30))
    page.goto(created["verificationUrl"])
    page.locator(".actions").get_by_text(re.compile("^I agree, continue")).click()
    walked.pages.append("consent")
    while True:
        page.wait_for_url(lambda url: "/flow/progress" not in url, timeout=ANALYSIS_TIMEOUT_MS)
        name = _page_name(page)
        if name == "result":
            break
        walked.pages.append(name)
        if screenshot:
            screenshot(page, f"adult-{subject}-{len(walked.pages):02d}-{name}")
        if name == "selfie":
            _load_camera(page, frontal_face(), page.locator("input[name=challenge]").input_value().split(","))
            _head_turns(page, walked, path="/flow/selfie", camera_button="Turn on the camera")
        elif name == "document":
            if page.locator("input[name=document]").count():
                _photograph_document(page, photo)
            if page.locator("[data-selfie]").count():
                _head_turns(page, walked, path="/flow/document", camera_button="Turn on the camera for the head turns")
        else:
            raise AssertionError(f"unexpected page {page.url}")
    expect(page.locator("#flow-result")).to_be_attached()
    counted = tally(page)
    walked.taps, walked.cameras = counted["taps"], counted["cameras"]
    events = list(SessionEvent.objects.filter(session_id=walked.session_id).order_by("created_at", "id"))
    walked.analysis_seconds = [
        (after.created_at - before.created_at).total_seconds()
        for before, after in zip(events, events[1:])
        if before.to_status == "processing" and not before.cause.startswith(("no camera", "face path off"))
    ]
    return walked


def report(walked: Walk, label: str) -> None:
    line = walked.line(label)
    print(line)
    ARTIFACTS.mkdir(exist_ok=True)
    with (ARTIFACTS / "adult-path.txt").open("a") as log:
        log.write(line + "\n")


def test_an_adult_whose_face_clears_the_policy_is_approved_after_consent_and_one_head_turn_capture(
    live_partner, live_base_url, counted_page, screenshot, celery_worker, age_policy_file
):
    age_policy_file({18: 25.0})  # the astronaut's face reads about 31: it clears 25
    walked = walk(counted_page, live_partner, live_base_url, subject="adult-face", screenshot=screenshot)
    report(walked, "limit 18, face clears the policy")

    expect(counted_page.get_by_role("heading", name="Age confirmed")).to_be_visible()
    body = finished(live_partner, walked.session_id)
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "age_estimation")
    assert walked.pages == ["consent", "selfie"] and walked.head_turn_captures == 1
    assert walked.cameras == ["user"]


def test_an_adult_whose_face_is_not_enough_finishes_with_the_document_without_a_second_head_turn_capture(
    live_partner, live_base_url, counted_page, screenshot, celery_worker, age_policy_file
):
    age_policy_file({18: 90.0})  # no face of the astronaut reads 90: the face is never enough
    walked = walk(counted_page, live_partner, live_base_url, subject="adult-document", screenshot=screenshot)
    report(walked, "limit 18, face not enough, document")

    expect(counted_page.get_by_role("heading", name="Age confirmed")).to_be_visible()
    body = finished(live_partner, walked.session_id)
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert walked.pages == ["consent", "selfie", "document"]
    assert walked.head_turn_captures == 1 and walked.cameras == ["user", "environment"]
    assert body["validateDoc"]["livenessChecked"] is True and body["validateDoc"]["holderMatch"]["passed"] is True


def test_where_the_face_path_is_off_the_adult_sends_the_document_then_the_head_turns(
    live_partner, live_base_url, counted_page, screenshot, celery_worker, age_policy_file
):
    age_policy_file({18: None})  # the committed policy before issue 26: the face path off at 18
    walked = walk(counted_page, live_partner, live_base_url, subject="adult-document-first", screenshot=screenshot)
    report(walked, "limit 18, face path off (document first)")

    expect(counted_page.get_by_role("heading", name="Age confirmed")).to_be_visible()
    body = finished(live_partner, walked.session_id)
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert walked.pages == ["consent", "document"]
    assert walked.head_turn_captures == 1 and walked.cameras == ["environment", "user"]


def test_document_first_the_head_turns_wait_for_the_document_and_a_liveness_retake_keeps_it(
    live_partner, live_base_url, counted_page, screenshot, celery_worker, age_policy_file
):
    age_policy_file({18: None})
    page = counted_page
    created = live_partner.create_session(subject="document-first-retake", age_limit=18, **return_urls(live_base_url))
    page.goto(created["verificationUrl"])
    page.get_by_role("button", name="I agree, continue with an ID document").click()
    expect(page.get_by_role("heading", name="Photograph your ID document")).to_be_visible()
    challenge = page.locator("input[name=challenge]").input_value().split(",")
    _load_camera(page, data_url(passport_page(years_ago(30))["buffer"]), challenge, turning=False)
    turns = page.locator("[data-selfie]")
    camera_on, start = (
        turns.get_by_role("button", name="Turn on the camera for the head turns"),
        turns.locator("[data-capture]"),
    )

    # Until the document's photo is taken, the head turns cannot begin.
    expect(turns.get_by_text("First finish the photo of your document, above.")).to_be_visible()
    expect(camera_on).to_be_disabled()
    expect(start).to_be_disabled()
    screenshot(page, "adult-document-first-01-head-turns-wait")
    panel = page.locator("[data-document] > [data-camera]")
    panel.get_by_role("button", name="Turn on the camera").click()
    panel.get_by_role("button", name="Take photo").click()
    panel.get_by_role("button", name="Use this photo").click()
    expect(start).to_be_disabled()  # the back is still to be decided
    panel.get_by_role("button", name="No back needed").click()
    expect(camera_on).to_be_enabled()
    expect(turns.get_by_text("First finish the photo of your document, above.")).to_be_hidden()

    # A face that does not turn: the service asks again, for the head turns only; the document stays.
    take_selfie(page, scripted=True, path="/flow/document", camera_button="Turn on the camera for the head turns")
    expect(page.get_by_text("We could not confirm that this was a live person")).to_be_visible(
        timeout=ANALYSIS_TIMEOUT_MS
    )
    expect(page.get_by_role("heading", name="Turn your head in front of the camera")).to_be_visible()
    expect(page.get_by_text("Your document was read, and what we read from it is kept")).to_be_visible()
    assert page.locator("input[name=document]").count() == 0
    _load_camera(page, frontal_face(), page.locator("input[name=challenge]").input_value().split(","))
    screenshot(page, "adult-document-first-02-only-the-head-turns-again")
    # The camera of the attempt before comes back on by itself: Start is the one tap of the retake.
    take_selfie(page, scripted=True, path="/flow/document", camera_button=None)

    expect(page.get_by_role("heading", name="Age confirmed")).to_be_visible(timeout=ANALYSIS_TIMEOUT_MS)
    body = finished(live_partner, created["sessionId"])
    assert (body["session"]["status"], body["session"]["reason"]) == ("approved", "document")
    assert body["validateDoc"]["trueAge"] == 30 and body["validateDoc"]["holderMatch"]["passed"] is True
    # The rear camera once (one document photo), the front camera for each head-turn capture.
    assert tally(page)["cameras"] == ["environment", "user", "user"]
