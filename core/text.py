"""Which characters no stored, displayed string may hold: the subjects, metadata and URLs partners send."""

import unicodedata


def has_unstorable_characters(text: str) -> bool:
    """Control, surrogate or invisible format characters anywhere in `text`.

    NUL cannot even be stored by PostgreSQL; lone surrogates (JSON's \\uD800 escapes) cannot be encoded in
    UTF-8; bidi overrides and zero-width characters make a string display as something it is not.
    """
    if text.isascii() and text.isprintable():
        return False  # the usual case, decided in C: ASCII's only such characters are its controls
    return any(unicodedata.category(char) in ("Cc", "Cs", "Cf") for char in text)
