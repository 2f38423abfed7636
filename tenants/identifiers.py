"""Prefixed ULID identifiers (CONTRACT 1): `ten_`, `ses_`, `msg_`... with an unguessable random part."""
from ulid import ULID


def prefixed_ulid(prefix: str) -> str:
    # python-ulid draws the 80 random bits from os.urandom, the same source as `secrets`.
    return f"{prefix}_{ULID()}"
