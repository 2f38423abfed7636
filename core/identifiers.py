"""Prefixed ULID identifiers (CONTRACT 1): `ten_`, `ses_`, `msg_`... with an unguessable random part."""

import re
import secrets
import time

from ulid import ULID

_ULID = "[0-9A-HJKMNP-TV-Z]{26}"  # Crockford base32


def prefixed_ulid(prefix: str) -> str:
    # Every id draws its own 80 random bits from `secrets`. Not ULID(): python-ulid's default generator is
    # monotonic, and gives an id made in the same millisecond by the same process the previous id's
    # random part plus one, so that a session id could be worked out from a request id made just before.
    milliseconds = time.time_ns() // 1_000_000
    return f"{prefix}_{ULID.from_bytes(milliseconds.to_bytes(6, 'big') + secrets.token_bytes(10))}"


def is_prefixed_ulid(value: str, prefix: str) -> bool:
    """Whether `value` has the shape of one of our ids. Anything else is answered without a query, so
    a NUL byte (which PostgreSQL refuses in text) or a megabyte of URL never reaches the database."""
    return re.fullmatch(f"{prefix}_{_ULID}", value) is not None
