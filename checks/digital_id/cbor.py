"""Bounded CBOR decoding: one exact item, capped in bytes, nesting depth and item count."""

from __future__ import annotations

import io

import cbor2

from .refusals import PresentationRefused, Refusal

MAX_BYTES = 64 * 1024  # a whole DeviceResponse with one age attestation is a few KiB
MAX_DEPTH = 12
MAX_ITEMS = 1024  # array elements + map entries, all levels


def cbor_decode(data: object, *, malformed: str, max_bytes: int = MAX_BYTES, max_items: int = MAX_ITEMS) -> object:
    """Decode `data` (bytes holding exactly one CBOR item); any flaw raises `malformed`, a cap TOO_LARGE."""
    if not isinstance(data, bytes):
        raise PresentationRefused(malformed, "expected a byte string")
    if len(data) > max_bytes:
        raise PresentationRefused(Refusal.TOO_LARGE, f"{len(data)} bytes of CBOR")
    stream = io.BytesIO(data)
    try:
        value = cbor2.CBORDecoder(
            stream, max_depth=MAX_DEPTH, allow_indefinite=False, allow_duplicate_keys=False
        ).decode()
    except cbor2.CBORDecodeError as exc:
        if "nesting depth" in str(exc):
            raise PresentationRefused(Refusal.TOO_LARGE, "CBOR nesting too deep") from None
        raise PresentationRefused(malformed, "not valid CBOR") from None
    except (RecursionError, ValueError, TypeError, OverflowError, MemoryError):
        raise PresentationRefused(malformed, "not valid CBOR") from None
    if stream.tell() != len(data):
        raise PresentationRefused(malformed, "trailing bytes after the CBOR item")
    _count_items(value, max_items)
    return value


def _count_items(value: object, max_items: int) -> None:
    pending, seen = [value], 0
    while pending:
        item = pending.pop()
        if isinstance(item, cbor2.CBORTag):
            pending.append(item.value)
        elif isinstance(item, (list, tuple)):
            seen += len(item)
            pending.extend(item)
        elif isinstance(item, dict):
            seen += len(item)
            pending.extend(item.keys())
            pending.extend(item.values())
        if seen > max_items:
            raise PresentationRefused(Refusal.TOO_LARGE, "too many CBOR items")


def embedded_cbor(value: object, *, malformed: str) -> tuple[bytes, object]:
    """An `#6.24(bstr .cbor X)` item: its inner bytes and X decoded."""
    if not (isinstance(value, cbor2.CBORTag) and value.tag == 24 and isinstance(value.value, bytes)):
        raise PresentationRefused(malformed, "expected tag 24 embedded CBOR")
    return value.value, cbor_decode(value.value, malformed=malformed)


def mapping(value: object, *, malformed: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise PresentationRefused(malformed, f"{what} is not a map")
    return value


def text_field(container: dict, key: str, *, malformed: str) -> str:
    value = container.get(key)
    if not isinstance(value, str) or not value or len(value) > 256:
        raise PresentationRefused(malformed, f"{key} missing or not text")
    return value
