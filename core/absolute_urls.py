"""The rule for an absolute http(s) URL a partner gives us (a return address, a webhook target): one function.

webhooks.addresses adds what a webhook target needs on top (https always, a public host).
"""

import ipaddress
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from .text import has_unstorable_characters

URL_MAX_LENGTH = 2048
MESSAGE_NOT_A_URL = "must be an absolute http or https URL"
_LOOPBACK_NAMES = ("localhost",)
_url_syntax = URLValidator(schemes=["http", "https"])


@lru_cache(maxsize=1024)
def _url_syntax_ok(url: str) -> bool:
    """Django's URL check, remembered: a partner sends the same few callback URLs with every session."""
    try:
        _url_syntax(url)
    except ValidationError:
        return False
    return True


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def absolute_url_problem(url, *, https_only: bool = False) -> tuple[str, str] | None:
    """(code, message) of what is wrong with `url` as an absolute http(s) URL, or None when it may be stored.

    Plain http is allowed (unless `https_only`) in development and to a loopback host only. The codes are the
    API's field error codes (CONTRACT 2); the message completes "The address ..." on the dashboard.
    """
    if not isinstance(url, str):
        return "invalid_type", "must be a string holding an absolute URL"
    if len(url) > URL_MAX_LENGTH:
        return "out_of_range", f"must be at most {URL_MAX_LENGTH} characters"
    if has_unstorable_characters(url) or not _url_syntax_ok(url):
        return "invalid_url", MESSAGE_NOT_A_URL
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port
    except ValueError:  # past 65535: the syntax check lets any five digits through
        port = -1
    if port is not None and not 1 <= port <= 65535:
        return "invalid_url", "must have a port between 1 and 65535"
    if parts.username is not None or parts.password is not None:
        # Credentials would sit in our database and logs, and the webhook transport never sends them.
        return "invalid_url", "must not contain a user name or password"
    if parts.scheme != "https" and (https_only or not (settings.DEBUG or is_loopback(host))):
        return "https_required", "must use https"
    return None
