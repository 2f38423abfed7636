"""The API's JSON parser: capped at 16 KiB, strict JSON (no NaN, no duplicate keys), numbers read exactly, an object."""

import json
from decimal import Decimal

from django.conf import settings
from rest_framework import exceptions
from rest_framework.parsers import BaseParser

from .problems import PayloadTooLarge

# Longer integer literals become Decimals: int() refuses over 4300 digits, and no field wants them anyway.
_INT_MAX_DIGITS = 100


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


def _parse_int(text: str):
    return int(text) if len(text) <= _INT_MAX_DIGITS else Decimal(text)


def _object_without_duplicate_keys(pairs):
    # Last-one-wins would let a partner's gateway and this service read different values out of one body.
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


# One decoder for every body: json.loads with these options would build a decoder and its scanner per call.
_strict_decoder = json.JSONDecoder(
    parse_float=Decimal,
    parse_int=_parse_int,
    parse_constant=_reject_constant,
    object_pairs_hook=_object_without_duplicate_keys,
)


def json_loads_strict(text: str):
    """json.loads with fractions as exact Decimals (18.00000000000000001 is not 18.0), refusing NaN and duplicates."""
    if text.startswith("\ufeff"):  # as json.loads refuses it
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    return _strict_decoder.decode(text)


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_BODY_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH", "") if request is not None else ""
        # A declared size over the cap is refused before reading (and waiting for) any of it.
        if declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(limit)
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise PayloadTooLarge(limit)
        try:
            data = json_loads_strict(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            raise exceptions.ParseError(f"The body is not valid JSON: {error}", code="malformed_json")
        if not isinstance(data, dict):
            raise exceptions.ParseError("The body must be a JSON object.", code="malformed_json")
        return data
