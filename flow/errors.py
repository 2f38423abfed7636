"""Friendly error pages of the hosted flow: every failure gets a plain-language page and the right status."""

from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.views.csrf import csrf_failure as django_csrf_failure

from tenants.branding import tenant_branding

from .headers import flow_headers

# kind -> (HTTP status, title, message)
ERRORS = {
    "link_incomplete": (
        400,
        _("This link is incomplete"),
        _(
            "Part of the verification link is missing. Go back to the site that sent you here "
            "and start the verification again."
        ),
    ),
    "link_invalid": (
        403,
        _("This link is not valid"),
        _(
            "We could not open this verification link. It may have been copied incompletely. "
            "Go back to the site that sent you here and start again."
        ),
    ),
    "link_expired": (
        410,
        _("This link has expired"),
        _(
            "Verification links are valid for a limited time. Go back to the site that sent you "
            "here to start a new verification."
        ),
    ),
    "session_finished": (
        410,
        _("This verification is finished"),
        _("This verification has already been completed and cannot be started again."),
    ),
    "no_session": (
        403,
        _("We could not find your verification"),
        _(
            "Open the verification link again from the site that sent you here. "
            "Your browser must accept cookies for this site."
        ),
    ),
    "csrf": (
        403,
        _("Please reload the page"),
        _(
            "For your security this form could not be sent: the page was open for too long or cookies are "
            "blocked. Reload the page and try again."
        ),
    ),
    "embed_refused": (
        403,
        _("This page cannot be shown here"),
        _(
            "The site you are on is not allowed to open this verification. If you run it, check its "
            "publishable key and allowed origins."
        ),
    ),
    "launch_invalid": (
        410,
        _("This link has already been used or has expired"),
        _(
            "Verification links of this kind work once, within a minute. Go back to the app or site "
            "that sent you here and start again."
        ),
    ),
    "not_found": (404, _("Page not found"), _("There is no page at this address.")),
    "too_many_uploads": (
        429,
        _("Too many uploads"),
        _("Pictures were sent too often in a short time. Wait a minute, then go back and try again."),
    ),
    "unavailable": (
        503,
        _("Temporarily unavailable"),
        _("The verification service is busy right now. Please try again in a minute."),
    ),
}


def error_page(request, kind: str, *, session=None):
    status, title, message = ERRORS[kind]
    context = {"title": title, "message": message, "kind": kind, "session": session}
    if session is not None:
        branding = tenant_branding(session.tenant)
        context.update(branding=branding, tenant_name=branding.name)
    response = render(request, "flow/error.html", context, status=status)
    if kind == "unavailable":
        response["Retry-After"] = "30"
    return flow_headers(response)


def not_found(request, rest=""):
    return error_page(request, "not_found")


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: the flow's friendly page under /flow/, Django's own page elsewhere."""
    if request.path.startswith("/flow/"):
        return error_page(request, "csrf")
    return django_csrf_failure(request, reason=reason)
