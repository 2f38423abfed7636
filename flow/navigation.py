"""Which page a session belongs on, and the decorator that sends every flow request there."""

import logging
from functools import wraps

from django.http import HttpResponseRedirect
from django.urls import reverse

from core.outages import outage_answered
from sessions_api.choices import Mode, Status
from sessions_api.selectors import SessionNotFound, session_get, session_retake_message

from .cookie import flow_cookie_session_id
from .errors import error_page
from .headers import flow_headers

logger = logging.getLogger(__name__)


class SeeOther(HttpResponseRedirect):
    """303: after a POST the browser follows with a GET, and Back does not re-send the form."""

    status_code = 303


def page_url_for(session) -> str:
    """The page for the session's current status; every flow view defers to this."""
    status = session.status
    if status in (Status.APPROVED, Status.DENIED):
        return reverse("flow:result")
    if status == Status.PROCESSING:
        return reverse("flow:progress")
    if session.mode == Mode.TEST:
        return (
            reverse("flow:sandbox")
            if status == Status.REQUIRES_DOC or session.selfie_attempts
            else reverse("flow:consent")
        )
    if status == Status.REQUIRES_DOC:
        return reverse("flow:document")
    # Sent back without an attempt counted (the analysis never came): the user has consented already,
    # and the selfie page shows why they are asked again.
    if session.selfie_attempts or session_retake_message(session):
        return reverse("flow:selfie")
    return reverse("flow:consent")


def flow_session(request):
    """The session the cookie names (finalized as expired first if its time is up), or None."""
    session_id = flow_cookie_session_id(request)
    if not session_id:
        return None
    try:
        return session_get(session_id=session_id)
    except SessionNotFound:
        return None


# A database or broker outage shows the friendly 503 page, never a stack trace.
outage_safe = outage_answered(lambda request: error_page(request, "unavailable"), logger=logger, where="flow")


def flow_page(*statuses: str, live_only: bool = False):
    """Give the view the cookie's session, or redirect to the page of its status when it is not one of `statuses`.

    `live_only` pages capture pictures for the real checks; a sandbox session is sent to its outcome buttons.
    """

    def decorate(view):
        @outage_safe
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            session = flow_session(request)
            if session is None:
                return error_page(request, "no_session")
            if statuses and session.status not in statuses:
                return flow_headers(SeeOther(page_url_for(session)))
            if live_only and session.mode == Mode.TEST:
                return flow_headers(SeeOther(reverse("flow:sandbox")))
            return flow_headers(view(request, session, *args, **kwargs))

        return wrapper

    return decorate
