"""Prefixed ULID identifiers (CONTRACT 1): `ten_`, `ses_`, `msg_`... with an unguessable random part."""
import re

from ulid import ULID

_ULID = "[0-9A-HJKMNP-TV-Z]{26}"  # Crockford base32


def prefixed_ulid(prefix: str) -> str:
    # python-ulid draws the 80 random bits from os.urandom, the same source as `secrets`.
    return f"{prefix}_{ULID()}"


def is_prefixed_ulid(value: str, prefix: str) -> bool:
    """Whether `value` has the shape of one of our ids. Anything else is answered without a query, so
    a NUL byte (which PostgreSQL refuses in text) or a megabyte of URL never reaches the database."""
    return re.fullmatch(f"{prefix}_{_ULID}", value) is not None
