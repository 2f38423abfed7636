"""The one rule for a session's `subject`, wherever it enters: the partner API, the client API, the SDK's frame.

A string of 1 to 255 characters without control characters (NUL cannot even be stored by PostgreSQL),
lone surrogates (which JSON's \\uD800 escapes can produce but UTF-8 cannot encode) or invisible format
characters: bidi overrides and isolates (U+202A-202E, U+2066-2069) and zero-width ones (U+200B-200F,
U+2060, U+FEFF) make a subject display as something it is not, in the dashboard and in a partner's tools.
"""

from core.text import has_unstorable_characters

SUBJECT_MAX_LENGTH = 255
MESSAGE_NOT_A_STRING = "must be a string"
MESSAGE_LENGTH = f"must be 1 to {SUBJECT_MAX_LENGTH} characters long"
MESSAGE_CHARACTERS = "must not contain control, invisible or bidi characters"


def text_problem(value, *, max_length: int) -> tuple[str, str] | None:
    """(code, message) of what is wrong with `value` as a stored, displayed string, or None."""
    if not isinstance(value, str):
        return "invalid_type", MESSAGE_NOT_A_STRING
    if not 1 <= len(value) <= max_length:
        return "out_of_range", f"must be 1 to {max_length} characters long"
    if has_unstorable_characters(value):
        return "invalid_value", MESSAGE_CHARACTERS
    return None


def subject_problem(value) -> tuple[str, str] | None:
    """(code, message) of what is wrong with `value` as a subject, or None when it may be stored."""
    return text_problem(value, max_length=SUBJECT_MAX_LENGTH)
