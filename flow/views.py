"""The hosted flow's pages: start, consent, selfie, progress, document, sandbox outcomes, result, cancel.

Every page re-reads the session named by the `av_flow` cookie and redirects to the page of its
current status (flow.navigation), so Back, Reload and a second tab always land somewhere sensible.

Decisions worth knowing:
  * A start link for a finished session answers 410 Gone with a page showing where to go next
    (the partner's callback or cancel address); an expired link answers 410 too, a bad one 403.
  * Without a camera the liveness check cannot be done. The selfie page offers two ways on:
    one photo per head-turn instruction (e.g. a phone's native camera through the file input's
    `capture` attribute; judged by the same liveness check), or "Use an ID document instead",
    which skips the selfie (initiated -> processing -> requires_doc, no attempt used). So every
    session can be completed without a camera, through the document step.
  * Where the calibrated age policy has the face path off for the session's age limit, the consent
    page says so and continues straight to the document step (no age is estimated from a face; under
    the presence policy the document page then asks for head turns in front of the front camera).
  * The adult whose selfie passed liveness but whose face was not enough goes to the document step
    without a second round of head turns: the holder check compares the document's portrait with that
    capture's face, kept sealed until the session ends (sessions_api.evidence, docs/adult-path.md). After a
    document attempt, the retake asks only for the half of the holder check that failed: the document's
    picture, or the head turns. Consent, document and result pages say which of these happens.
  * The user whose selfie attempts run out (not live, or no usable picture) is not turned away: the session
    goes to the document step, whose page says why and offers the digital ID too where the tenant enables it.
    A retake page turns the camera back on by itself where the browser says it may, so trying again is one tap.
  * Test-mode (sandbox) sessions never see a camera page: consent leads to outcome buttons that
    call the same service as POST /v1/test/sessions/{id}/advance.
"""

from urllib.parse import urlencode

from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_GET, require_POST

from age_passes.services import age_pass_save_offered, age_pass_use_offered
from core.client_address import client_address
from sessions_api.choices import Mode, Reason, Status
from sessions_api.decision import MAX_ATTEMPTS
from sessions_api.flow_link import FlowLinkRejected, flow_link_verify
from sessions_api.return_urls import return_url
from sessions_api.sandbox import SANDBOX_CAUSE_PREFIX, sandbox_advance
from sessions_api.selectors import (
    session_face_estimated,
    session_face_path_on,
    session_get,
    session_presence_required,
    session_retake_message,
)
from sessions_api.state_machine import TransitionNotAllowed, session_cancel, session_consented, session_opened
from sessions_api.submission import (
    CAUSE_FACE_PATH_OFF,
    MAX_FRAMES_PER_STEP,
    MAX_IMAGE_BYTES,
    document_path_choose,
    document_step_needs,
    document_submit,
    selfie_challenge_issue,
    selfie_submit,
)
from tenants.branding import tenant_branding
from wallets.cross_device import cross_device_offered
from wallets.digital_id import digital_id_offered

from .age_pass import save_right_read
from .cookie import flow_cookie_read, flow_cookie_set
from .errors import error_page
from .headers import flow_headers, no_referrer
from .language import language_cookie_set, language_from_link
from .navigation import SeeOther, flow_page, outage_safe, page_url_for
from .texts import (
    INSTRUCTIONS,
    MESSAGE_CHOOSE_AN_OUTCOME,
    SANDBOX_APPROVE_DOCUMENT,
    SANDBOX_OUTCOMES,
    SCRIPT_TEXTS,
    denial_message,
)
from .upload_step import UploadStep, upload_step_view
from .uploads import read_files

OPEN = (Status.INITIATED, Status.PROCESSING, Status.REQUIRES_DOC)
# A challenge has 4 steps (checks.liveness: 3 moves, then "center"). Camera frames are ~50 KB each;
# the no-camera fallback sends one photo per step, each up to the 10 MB every picture may have.
SELFIE_STEPS = 4
SELFIE_MAX_FILES = SELFIE_STEPS * MAX_FRAMES_PER_STEP
SELFIE_MAX_BYTES = SELFIE_STEPS * MAX_IMAGE_BYTES


def _reloaded(session):
    return session_get(session_id=session.id)


def _context(session, **extra):
    branding = tenant_branding(session.tenant)
    return {
        "session": session,
        "branding": branding,
        "tenant_name": branding.name,
        "is_sandbox": session.mode == Mode.TEST,
        "age_limit": session.age_limit,
        "script_texts": SCRIPT_TEXTS,
        **extra,
    }


def _with_digital_id(session) -> dict:
    """The digital-ID block beside a step: shown where the tenant enabled it (the page's script checks the browser)."""
    return {"digital_id": digital_id_offered(session), "digital_id_phone": cross_device_offered(session)}


@require_GET
@no_referrer
@outage_safe
def start(request):
    language = language_from_link(request)
    try:
        session = flow_link_verify(request.GET)
    except FlowLinkRejected as rejected:
        response = error_page(request, rejected.kind, session=rejected.session)
    else:
        response = flow_headers(SeeOther(reverse("flow:consent")))
        flow_cookie_set(response, session)
    if language:
        language_cookie_set(response, language)
    return response


@require_GET
@flow_page(Status.INITIATED)
def consent(request, session):
    session_opened(session)
    face_path_on = session_face_path_on(session)
    if session.mode == Mode.TEST:
        next_url = reverse("flow:sandbox")
    else:
        next_url = reverse("flow:selfie") if face_path_on else reverse("flow:document_instead")
    return render(
        request,
        "flow/consent.html",
        _context(
            session,
            next_url=next_url,
            age_limit=session.age_limit,
            face_path_on=face_path_on,
            document_first=session.mode == Mode.LIVE and not face_path_on,
            # Head turns come with a document; after a selfie whose face was not enough, that selfie's.
            presence=session_presence_required(session),
            # A sandbox session tries its test wallet on the outcomes page.
            digital_id=session.mode == Mode.LIVE and digital_id_offered(session),
            digital_id_phone=cross_device_offered(session),
            age_pass=age_pass_use_offered(session),
        ),
    )


def _head_turns(session) -> dict:
    """The head-turn capture's template context (flow/_head_turns.html) for the session's challenge."""
    steps = [
        {"index": index, "step": step, "instruction": INSTRUCTIONS.get(step, step), "field": f"frame_{index}_{step}"}
        for index, step in enumerate(session.liveness_challenge)
    ]
    return {
        "steps": steps,
        "challenge": ",".join(session.liveness_challenge),
        "timing": ",".join(str(ms) for ms in session.liveness_timing or []),
        "flash": ",".join(session.liveness_flash or []),
    }


def _head_turn_frames(request) -> tuple[list[str], list[list[bytes]]]:
    challenge = [step for step in request.POST.get("challenge", "").split(",") if step]
    return challenge, [read_files(request, f"frame_{index}_{step}") for index, step in enumerate(challenge)]


def _selfie_page(request, session, *, error=None, status=200):
    return render(
        request,
        "flow/selfie.html",
        _context(
            session,
            **_head_turns(session),
            error=error,
            retake=None if error else session_retake_message(session),
            attempt=session.selfie_attempts + 1,
            max_attempts=MAX_ATTEMPTS,
            presence=session_presence_required(session),
        ),
        status=status,
    )


def _selfie_submit(request, session):
    challenge, frames_by_step = _head_turn_frames(request)
    selfie_submit(
        session=session,
        challenge=challenge,
        frames_by_step=frames_by_step,
        capture=request.POST.get("capture"),
        client_address=client_address(request),
    )


def _selfie_prepare(session):
    session_consented(session)  # the consent page's "I agree" leads here
    if not session_face_path_on(session):
        return _document_first(session)
    selfie_challenge_issue(session=session)
    return None


selfie = upload_step_view(
    UploadStep(
        status=Status.INITIATED,
        max_files=SELFIE_MAX_FILES,
        max_total_bytes=SELFIE_MAX_BYTES,
        page=_selfie_page,
        submit=_selfie_submit,
        prepare=_selfie_prepare,
    )
)


@require_POST
@csrf_protect
@flow_page(Status.INITIATED)
def document_instead(request, session):
    """No camera: the liveness check is impossible, so the session continues with an identity document."""
    session_consented(session)  # from the consent page's "I agree, continue with an ID document", too
    if session.mode == Mode.LIVE:
        if not session_face_path_on(session):
            return _document_first(session)
        try:
            document_path_choose(session=session)
        except TransitionNotAllowed:
            pass
    return SeeOther(page_url_for(_reloaded(session)))


def _document_first(session):
    """The face path is off for this age limit: no selfie, the document step straight away."""
    try:
        document_path_choose(session=session, cause=CAUSE_FACE_PATH_OFF)
    except TransitionNotAllowed:
        pass
    return SeeOther(page_url_for(_reloaded(session)))


@require_GET
@flow_page(Status.PROCESSING)
def progress(request, session):
    return render(request, "flow/progress.html", _context(session))


@require_GET
@flow_page()
def status(request, session):
    return JsonResponse({"status": session.status, "next": page_url_for(session)})


def _document_page(request, session, *, error=None, status=200):
    presence = session_presence_required(session)
    picture_needed, head_turns_needed = document_step_needs(session)
    return render(
        request,
        "flow/document.html",
        _context(
            session,
            error=error,
            retake=None if error else session_retake_message(session),
            attempt=session.document_attempts + 1,
            max_attempts=MAX_ATTEMPTS,
            after_selfie=session.document_attempts == 0 and session_face_estimated(session),
            # The selfie's attempts ran out (not live, or no usable picture): this step is the way left.
            selfie_attempts_used=session.document_attempts == 0
            and session.selfie_attempts >= MAX_ATTEMPTS
            and not session_face_estimated(session),
            **_with_digital_id(session),
            presence=presence,
            picture_needed=picture_needed,
            head_turns_needed=head_turns_needed,
            # The holder check uses the passed capture the session keeps: no second round of head turns.
            head_turns_reused=presence and not head_turns_needed,
            **(_head_turns(session) if head_turns_needed else {}),
        ),
        status=status,
    )


def _document_submit(request, session):
    images = read_files(request, "document")
    back = read_files(request, "document_back")
    challenge, frames_by_step = _head_turn_frames(request)
    document_submit(
        session=session,
        image=images[0] if images else None,
        back=back[0] if back else None,
        challenge=challenge,
        frames_by_step=frames_by_step,
        capture=request.POST.get("capture"),
        client_address=client_address(request),
    )


def _document_prepare(session):
    if document_step_needs(session)[1]:
        selfie_challenge_issue(session=session)  # the head turns that come with the document
    return None


# The document's two sides and, under the presence policy, the head turns: as many pictures as a selfie.
document = upload_step_view(
    UploadStep(
        status=Status.REQUIRES_DOC,
        max_files=2 + SELFIE_MAX_FILES,
        max_total_bytes=SELFIE_MAX_BYTES,
        page=_document_page,
        submit=_document_submit,
        prepare=_document_prepare,
    )
)


@csrf_protect
@flow_page(Status.INITIATED, Status.REQUIRES_DOC)
def sandbox(request, session):
    if session.mode != Mode.TEST:
        return SeeOther(page_url_for(session))
    session_consented(session)  # a test session's "I agree" leads here
    outcomes = SANDBOX_OUTCOMES[session.status]
    if session.status == Status.INITIATED and not session_face_path_on(session):
        # No face can approve at this age limit: an approval there stands for a document read.
        outcomes = [(value, SANDBOX_APPROVE_DOCUMENT if value == "approved" else label) for value, label in outcomes]
    if request.method == "POST":
        chosen = request.POST.get("outcome", "")
        if chosen not in dict(outcomes):
            return render(
                request,
                "flow/sandbox.html",
                _context(session, outcomes=outcomes, error=MESSAGE_CHOOSE_AN_OUTCOME, **_with_digital_id(session)),
                status=400,
            )
        try:
            session = sandbox_advance(
                session_id=session.id, to=chosen, cause=SANDBOX_CAUSE_PREFIX + "outcome chosen in the web flow"
            )
        except TransitionNotAllowed:
            session = _reloaded(session)
        return SeeOther(page_url_for(session))
    return render(request, "flow/sandbox.html", _context(session, outcomes=outcomes, **_with_digital_id(session)))


def _return_address(request, session) -> str:
    """Where the result page sends the user: the partner's URL of the session (web), the registered return URL
    of a launch code with `session_id` and `status` (mobile hand-off), nowhere when the SDK gets a message."""
    cookie = flow_cookie_read(request)
    if cookie is not None and cookie.messages_parent:
        return ""
    if cookie is not None and cookie.channel == "launch" and cookie.target:
        return f"{return_url(cookie.target, session.id)}&{urlencode({'status': session.status})}"
    return session.callback_return_url if session.status == Status.APPROVED else session.cancel_return_url


@require_GET
@flow_page(Status.APPROVED, Status.DENIED)
def result(request, session):
    return render(
        request,
        "flow/result.html",
        _context(
            session,
            approved=session.status == Status.APPROVED,
            return_address=_return_address(request, session),
            denial_message=denial_message(session.reason, step=session.step),
            age_pass_save=age_pass_save_offered(session, save_right=save_right_read(request)),
        ),
    )


@require_POST
@csrf_protect
@flow_page()
def cancel(request, session):
    if session.status in OPEN:
        try:
            session = session_cancel(session_id=session.id)
        except TransitionNotAllowed:  # decided or expired a moment ago: show what won
            session = _reloaded(session)
    return_address = _return_address(request, session)
    if session.status == Status.DENIED and session.reason == Reason.CANCELLED and return_address:
        return SeeOther(return_address)
    return SeeOther(reverse("flow:result"))
