"""The API's JSON parser: capped at 16 KiB, strict JSON (no NaN), and the body must be an object."""
import json

from django.conf import settings
from rest_framework import exceptions
from rest_framework.parsers import BaseParser

from .problems import PayloadTooLarge


def _reject_constant(name):
    raise ValueError(f"{name} is not valid JSON")


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
            data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (ValueError, UnicodeDecodeError, RecursionError) as error:
            raise exceptions.ParseError(f"The body is not valid JSON: {error}", code="malformed_json")
        if not isinstance(data, dict):
            raise exceptions.ParseError("The body must be a JSON object.", code="malformed_json")
        return data
