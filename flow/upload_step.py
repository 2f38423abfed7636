"""One view for every flow page that uploads pictures (selfie, document): the request's order written once.

A POST is answered in this order: the per-session and per-address upload limits (429, body never
read); the announced size is checked before the body is read (413, body never read); the memory-only upload
handler is installed before anything parses the body; only
then is CSRF checked, and the session's status; then the upload is submitted for analysis. Each
step says what differs (its status, limits, page and how it reads its fields) in an `UploadStep`.
Every upload refused for what it is (too large, not a picture, frames missing) is counted on the
session (sessions_api.submission.upload_refused); past the budget the session ends.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET

from sessions_api.selectors import session_get
from sessions_api.submission import SubmissionRejected, upload_refused

from .age_pass import save_right_grant
from .errors import error_page
from .navigation import SeeOther, flow_page, page_url_for
from .upload_rate import upload_wait
from .uploads import MESSAGE_REQUEST_TOO_LARGE, request_too_large, upload_rejection, use_memory_uploads


@dataclass(frozen=True)
class UploadStep:
    status: str  # the session status whose page this is
    max_files: int
    max_total_bytes: int
    # page(request, session, error=None, status=200): the step's page, with an error to show if any.
    page: Callable
    # submit(request, session): read the step's fields and submit them; raises SubmissionRejected.
    submit: Callable
    # prepare(session): what showing the page starts (e.g. a new liveness challenge); a response it
    # returns is sent instead of the page (e.g. a redirect when the step does not apply).
    prepare: Callable = lambda session: None


def upload_step_view(step: UploadStep):
    page = flow_page(step.status, live_only=True)

    @require_GET
    @page
    def show(request, session):
        instead = step.prepare(session)
        return instead if instead is not None else step.page(request, session)

    def refused(request, session, *, error, status):
        if upload_refused(session=session):  # that was the last refusal the session allows: it has ended
            return SeeOther(page_url_for(session_get(session_id=session.id)))
        return step.page(request, session, error=error, status=status)

    @page
    def too_large(request, session):
        return refused(request, session, error=MESSAGE_REQUEST_TOO_LARGE, status=413)

    @csrf_protect
    @page
    def receive(request, session, *, handler):
        rejected = upload_rejection(request, handler)
        if rejected:
            return refused(request, session, error=rejected, status=413)
        try:
            step.submit(request, session)
        except SubmissionRejected as rejected:
            if rejected.counts:
                return refused(request, session, error=rejected.message, status=rejected.status_code)
            return step.page(request, session, error=rejected.message, status=rejected.status_code)
        response = SeeOther(reverse("flow:progress"))
        save_right_grant(request, response, session)  # this browser's pictures may approve the session
        return response

    @csrf_exempt  # the upload handler must be set before anything reads the body; CSRF is checked just after
    def view(request):
        if request.method != "POST":
            return show(request)
        wait = upload_wait(request)
        if wait is not None:
            # Answered from Redis alone: no body read, no database query, a static page.
            response = error_page(request, "too_many_uploads")
            response["Retry-After"] = str(wait)
            response["Connection"] = "close"
            return response
        if request_too_large(request, max_total_bytes=step.max_total_bytes):
            # Nothing changes on this answer, so it needs no CSRF check; the body is never read.
            response = too_large(request)
            response["Connection"] = "close"
            return response
        handler = use_memory_uploads(request, max_files=step.max_files, max_total_bytes=step.max_total_bytes)
        return receive(request, handler=handler)

    return view
