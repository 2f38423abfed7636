"""The partner's return addresses as the user's browser is sent to them: with `session_id` added.

`callback_url` (approved) and `cancel_url` (denied, cancelled, expired) receive `?session_id=ses_...`, so the
partner knows which session came back; it still reads the result by GET /v1/sessions/{id} (or the
webhook), as anyone can type a query string.
"""

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

PARAMETER = "session_id"


def return_url(url: str, session_id: str) -> str:
    """`url` with `session_id` set in its query (replacing one already there); empty stays empty."""
    if not url:
        return ""
    parts = urlsplit(url)
    query = [(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True) if name != PARAMETER]
    query.append((PARAMETER, session_id))
    return urlunsplit(parts._replace(query=urlencode(query)))
