"""The rule for a webhook target address, wherever one is given: the API's notification_url, the dashboard's forms.

An absolute https URL (core.absolute_urls) to a host that is plainly public (webhooks.egress); each delivery
resolves the host and checks its addresses again before sending.
"""

from urllib.parse import urlsplit

from core.absolute_urls import absolute_url_problem

from .egress import host_is_forbidden


def webhook_url_problem(url) -> tuple[str, str] | None:
    """(code, message) of what is wrong with `url` as a webhook target, or None when events may be sent there."""
    problem = absolute_url_problem(url, https_only=True)
    if problem is None and host_is_forbidden(urlsplit(url).hostname or ""):
        return "forbidden_host", "must point to a public host"
    return problem
