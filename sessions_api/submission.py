"""The web side of an analysis: accept a selfie or a document, move the session to `processing`, queue the work.

How biometric images are handled (CONTRACT 3: "held in memory only for the analysis, then deleted"):
  * The web flow reads an upload into memory only (flow.uploads keeps files off disk) and checks
    each picture's header (`checks.images.read_header`: format, size and decode cost, no pixel decoded) and the
    pixels of the whole upload against a budget, before anything changes. Decoding a picture costs
    up to seconds of CPU whatever its size on the wire (a 110 KB PNG of 5000x5000, a 700-byte JPEG
    claiming as much): that happens only in the analysis worker, never in a web worker, so uploads
    cannot stall the partner API. A picture the worker cannot decode is a retake, counted.
  * Every upload refused here counts toward the session's MAX_REFUSED_UPLOADS; past it the session
    ends as denied / attempts_exceeded, so a refused upload cannot be repeated for ever.
  * `selfie_submit` / `document_submit` move the session to `processing` and publish one Celery
    task whose message carries the image bytes (sessions_api.tasks). The message lives in the broker
    (Redis, in memory) until the worker acknowledges it, and expires unconsumed after
    ANALYSIS_TASK_EXPIRES seconds. (The embedded demo's filesystem broker keeps it as a file under
    var/broker until consumed.) The worker's side is sessions_api.analysis.
"""

from __future__ import annotations

import json
import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

# User messages are stored and raised in English, marked; the flow translates them where it shows them.
from django.utils.translation import gettext_noop

# The flow sizes its upload limits by this, through us: it does not import the checks itself.
from checks.images import MAX_BYTES as MAX_IMAGE_BYTES  # noqa: F401
from core.broker_epoch import broker_epoch

from .analysis import RETAKE_CAUSE_PREFIX
from .decision import MESSAGE_HEAD_TURNS_MISSING
from .evidence import session_evidence
from .models import Reason, Status, Step, VerificationSession
from .selectors import session_presence_required
from .state_machine import TransitionNotAllowed, session_transition
from .tasks import document_analysis_queue, selfie_analysis_queue

logger = logging.getLogger(__name__)

MAX_FRAMES_PER_STEP = 8
# Pixels one upload may send the worker to decode: 32 camera frames (0.3 MP each) or the no-camera
# fallback's four 12-megapixel photos fit; a few 25-megapixel pictures do not.
MAX_PIXELS_PER_UPLOAD = 50_000_000
# Refused uploads a session may make across its steps; the next one ends it (attempts_exceeded).
MAX_REFUSED_UPLOADS = 10
MESSAGE_TOO_MANY_PIXELS = gettext_noop("The pictures are too large together. Take new pictures or choose smaller ones.")
MESSAGE_QUEUE_DOWN = gettext_noop("We cannot check pictures right now. Please try again in a minute.")
MESSAGE_CHALLENGE_CHANGED = gettext_noop(
    "The instructions changed while you were taking the pictures. Please start again."
)
MESSAGE_FRAMES_MISSING = gettext_noop("We did not receive a picture for every instruction. Please start again.")
MESSAGE_TOO_MANY_FRAMES = gettext_noop("Too many pictures were sent. Please start again.")
MESSAGE_STEP_DONE = gettext_noop("This step is already done. Continue from the current page.")
MESSAGE_NO_DOCUMENT_PICTURE = gettext_noop("Choose or take a picture of your document first.")


class SubmissionRejected(Exception):
    """The upload cannot be analysed; `message` is for the user. Nothing about the session changed."""

    def __init__(self, message: str, *, status_code: int = 400):
        super().__init__(message)
        self.message = message
        self.status_code = status_code

    @property
    def counts(self) -> bool:
        """Whether the upload itself was at fault (400, 413), not a race (409) or our queue (503)."""
        return self.status_code in (400, 413)


def selfie_challenge_issue(*, session: VerificationSession) -> list[str]:
    """A fresh head-turn challenge for the selfie page, or for the document page under the presence policy,
    stored on the session (not biometric data)."""
    from checks.flash import FLASH_FRAMES_PER_STEP, flash_sequence_new
    from checks.liveness import challenge_durations, challenge_new

    challenge = challenge_new()
    timing = challenge_durations(challenge)
    flash = flash_sequence_new(FLASH_FRAMES_PER_STEP * len(challenge))
    updated = VerificationSession.objects.filter(
        pk=session.pk, status__in=(Status.INITIATED, Status.REQUIRES_DOC)
    ).update(liveness_challenge=challenge, liveness_timing=timing, liveness_flash=flash, updated_at=timezone.now())
    if updated:
        session.liveness_challenge = challenge
        session.liveness_timing = timing
        session.liveness_flash = flash
    return challenge


MAX_CAPTURE_RECORD = 4_096  # characters of the page's capture record


def _capture_record(session: VerificationSession, record: str | None) -> dict | None:
    """The page's capture record (JSON: the camera's label, one time in ms and one screen colour per frame),
    with the issued timing and colours.

    None when the page sent none (the photo-upload fallback). A record that cannot be read is kept as
    an empty one, which the timing check refuses, rather than dropped, which would skip the check.
    """
    if not record:
        return None
    try:
        parsed = json.loads(record[:MAX_CAPTURE_RECORD])
        label = str(parsed.get("label", ""))[:200]
        times = [int(t) for t in parsed.get("times", [])][: 4 * MAX_FRAMES_PER_STEP * 8]
        shown = [str(colour)[:16] for colour in parsed.get("colors", [])][: 4 * MAX_FRAMES_PER_STEP * 8]
    except (ValueError, TypeError, AttributeError):
        label, times, shown = "", [], []
    return {
        "label": label,
        "times": times,
        "durations": list(session.liveness_timing or []),
        "flash": list(session.liveness_flash or []),
        "shown": shown,
    }


def _check_headers(images: list[bytes]) -> None:
    """Each picture's header, and the pixels of all of them against the budget; no pixel is decoded."""
    from checks.images import ImageRejected, read_header

    pixels = 0
    for data in images:
        try:
            pixels += read_header(data).pixels
        except ImageRejected as rejected:
            raise SubmissionRejected(rejected.message) from None
        if pixels > MAX_PIXELS_PER_UPLOAD:
            raise SubmissionRejected(MESSAGE_TOO_MANY_PIXELS, status_code=413)


@transaction.atomic
def upload_refused(*, session: VerificationSession) -> bool:
    """Count a refused upload of this session; True when that ended the session (denied, attempts_exceeded)."""
    counted = VerificationSession.objects.filter(
        pk=session.pk, status__in=(Status.INITIATED, Status.REQUIRES_DOC)
    ).update(refused_uploads=F("refused_uploads") + 1)
    if not counted:
        return False
    refused = VerificationSession.objects.values_list("refused_uploads", flat=True).get(pk=session.pk)
    if refused < MAX_REFUSED_UPLOADS:
        return False
    # Through processing, as the state diagram has it: only a judged attempt ends a session this way.
    cause = f"{refused} uploads refused"
    try:
        session_transition(
            session_id=session.id,
            to=Status.PROCESSING,
            cause=cause,
            expected_from=(Status.INITIATED, Status.REQUIRES_DOC),
        )
        session_transition(
            session_id=session.id,
            to=Status.DENIED,
            reason=Reason.ATTEMPTS_EXCEEDED,
            cause=cause,
            expected_from=(Status.PROCESSING,),
        )
    except TransitionNotAllowed:  # cancelled or expired meanwhile: that ending stands
        return False
    return True


CAUSE_SELFIE_SUBMITTED = "selfie submitted"
CAUSE_DOCUMENT_SUBMITTED = "document submitted"


def selfie_submit(
    *,
    session: VerificationSession,
    challenge: list[str],
    frames_by_step: list[list[bytes]],
    capture: str | None = None,
    client_address: str | None = None,
) -> None:
    """Check the frames of each challenge step, go to `processing` and queue the analysis.

    `challenge` is the one the page showed; a page left open while another tab issued a new one
    is refused rather than judged against instructions the user never saw. `capture` is the page's
    capture record (see _capture_record), checked with the frames by checks.liveness. `client_address`
    (the browser's, as the limits see it) chooses the analysis queue with the tenant, and is not kept.
    """
    frames = _challenge_frames(session, challenge, frames_by_step)
    _check_headers([data for _, data in frames])
    record = _capture_record(session, capture)
    _submit(
        session,
        Status.INITIATED,
        lambda: selfie_analysis_queue(
            session.id, frames, record, tenant_id=session.tenant_id, client_address=client_address
        ),
        cause=CAUSE_SELFIE_SUBMITTED,
    )


def _challenge_frames(
    session: VerificationSession, challenge: list[str], frames_by_step: list[list[bytes]]
) -> list[tuple[str, bytes]]:
    if not session.liveness_challenge or list(challenge) != list(session.liveness_challenge):
        raise SubmissionRejected(MESSAGE_CHALLENGE_CHANGED, status_code=409)
    if len(frames_by_step) != len(challenge) or not all(frames_by_step):
        raise SubmissionRejected(MESSAGE_FRAMES_MISSING)
    if any(len(step_frames) > MAX_FRAMES_PER_STEP for step_frames in frames_by_step):
        raise SubmissionRejected(MESSAGE_TOO_MANY_FRAMES, status_code=413)
    return [(step, data) for step, step_frames in zip(challenge, frames_by_step) for data in step_frames]


def document_step_needs(session: VerificationSession) -> tuple[bool, bool]:
    """(a document picture, head turns): what the document step asks for now. Under the presence policy the
    head turns are needed unless the session keeps a passed capture (the selfie's, or one sent with a
    document that failed); the picture is needed unless it keeps a document that passed its checks and only
    the head turns failed (sessions_api.evidence)."""
    if not session_presence_required(session):
        return True, False
    kept = session_evidence(session)
    if kept.document is not None and kept.live_face is not None:  # never left open by the analysis; be safe
        return True, False
    return kept.document is None, kept.live_face is None


def document_submit(
    *,
    session: VerificationSession,
    image: bytes | None,
    back: bytes | None = None,
    challenge: list[str] | None = None,
    frames_by_step: list[list[bytes]] | None = None,
    capture: str | None = None,
    client_address: str | None = None,
) -> None:
    """Check the document's pictures (front or data page, and the back if given) and, under the presence
    policy, the head-turn capture that must come with them unless a passed one is kept; go to `processing`
    and queue the analysis. Without a picture, the document kept from an earlier attempt is the one judged.
    Head turns sent while a passed capture is kept are dropped unseen, with their capture record (see
    _capture_record), which otherwise goes with them to checks.liveness as the selfie's does. `client_address`
    as for selfie_submit."""
    picture_needed, head_turns_needed = document_step_needs(session)
    if image is None:
        if picture_needed:
            raise SubmissionRejected(MESSAGE_NO_DOCUMENT_PICTURE)
        back = None
    frames: list[tuple[str, bytes]] = []
    record = None
    if head_turns_needed:
        if not challenge or not any(frames_by_step or []):
            raise SubmissionRejected(MESSAGE_HEAD_TURNS_MISSING)
        frames = _challenge_frames(session, challenge, frames_by_step or [])
        record = _capture_record(session, capture)
    _check_headers([*([image] if image else []), *([back] if back else []), *(data for _, data in frames)])
    _submit(
        session,
        Status.REQUIRES_DOC,
        lambda: document_analysis_queue(
            session.id, image, back, frames, record, tenant_id=session.tenant_id, client_address=client_address
        ),
        cause=CAUSE_DOCUMENT_SUBMITTED,
    )


def _submit(session: VerificationSession, from_status: str, publish, *, cause: str) -> None:
    try:
        session_transition(session_id=session.id, to=Status.PROCESSING, expected_from=(from_status,), cause=cause)
    except TransitionNotAllowed:
        raise SubmissionRejected(MESSAGE_STEP_DONE, status_code=409)
    try:
        # The broker's epoch goes with the session: if Redis comes back empty, the watchdog knows at once
        # that this message, the only copy of the pictures, is gone (sessions_api.watchdog).
        epoch = broker_epoch()
        if epoch is not None:
            VerificationSession.objects.filter(pk=session.id).update(analysis_epoch=epoch.token)
        publish()
    except Exception:  # broker unreachable: nothing will analyse it, so give the step back (no attempt used)
        logger.exception("could not queue the analysis of %s", session.id)
        try:
            session_transition(
                session_id=session.id,
                to=from_status,
                expected_from=(Status.PROCESSING,),
                cause=RETAKE_CAUSE_PREFIX + MESSAGE_QUEUE_DOWN,
                message=MESSAGE_QUEUE_DOWN,
            )
        except TransitionNotAllowed:
            pass
        raise SubmissionRejected(MESSAGE_QUEUE_DOWN, status_code=503)


CAUSE_NO_CAMERA = "no camera: the user chose the document step"
CAUSE_FACE_PATH_OFF = "face path off for this age limit: straight to the document step"


def document_path_choose(*, session: VerificationSession, cause: str = CAUSE_NO_CAMERA) -> VerificationSession:
    """Skip the selfie and ask for a document (initiated -> processing -> requires_doc)."""
    session_transition(session_id=session.id, to=Status.PROCESSING, expected_from=(Status.INITIATED,), cause=cause)
    return session_transition(
        session_id=session.id,
        to=Status.REQUIRES_DOC,
        expected_from=(Status.PROCESSING,),
        step=Step.DOCUMENT,
        cause=cause,
    )
