"""The request fields of the API: strict JSON types, no coercion, errors in the contract's codes (CONTRACT 2)."""

from decimal import Decimal

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from core.absolute_urls import URL_MAX_LENGTH, absolute_url_problem
from core.text import has_unstorable_characters
from webhooks.addresses import webhook_url_problem

from ...subjects import SUBJECT_MAX_LENGTH, text_problem

AGE_LIMIT_MIN = 10
AGE_LIMIT_MAX = 21
# Stripe's limits for `metadata`: partners who know one know the other.
METADATA_MAX_KEYS = 50
METADATA_KEY_MAX_LENGTH = 40
METADATA_VALUE_MAX_LENGTH = 500


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": SUBJECT_MAX_LENGTH})
class StrictStringField(serializers.Field):
    """A JSON string, 1..max_length characters, without control characters. Numbers are not coerced."""

    def __init__(self, *, max_length: int, **kwargs):
        self.max_length = max_length
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        problem = text_problem(data, max_length=self.max_length)
        if problem is not None:
            code, message = problem
            raise ValidationError(message, code=code)
        return data

    def to_representation(self, value):
        return value


@extend_schema_field({"type": "integer", "minimum": AGE_LIMIT_MIN, "maximum": AGE_LIMIT_MAX})
class StrictIntegerField(serializers.Field):
    """A JSON number with an integral value (18 or 18.0); strings, booleans and fractions are refused.

    The parser reads fractions as exact Decimals, so 18.00000000000000001 is a fraction, not 18.0.
    """

    def __init__(self, *, min_value: int, max_value: int, **kwargs):
        self.min_value, self.max_value = min_value, max_value
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float, Decimal)):
            raise ValidationError("must be an integer", code="invalid_type")
        # The range first: int() of 1e999999999 would take all the memory there is.
        if not self.min_value <= data <= self.max_value:
            raise ValidationError(f"must be between {self.min_value} and {self.max_value}", code="out_of_range")
        if data != int(data):
            raise ValidationError("must be a whole number", code="invalid_type")
        return int(data)

    def to_representation(self, value):
        return value


@extend_schema_field({"type": "string", "format": "uri", "maxLength": URL_MAX_LENGTH, "nullable": True})
class StrictUrlField(serializers.Field):
    """An absolute http(s) URL (core.absolute_urls); `webhook=True` holds it to the webhook target rule
    (https, a public host: webhooks.addresses), the same rule the dashboard's forms apply."""

    def __init__(self, *, webhook: bool = False, **kwargs):
        self.webhook = webhook
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)  # an explicit null means "not set", like an absent field
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        problem = webhook_url_problem(data) if self.webhook else absolute_url_problem(data)
        if problem is not None:
            code, message = problem
            raise ValidationError(message, code=code)
        return data

    def to_representation(self, value):
        return value or None


@extend_schema_field(
    {
        "type": "object",
        "maxProperties": METADATA_MAX_KEYS,
        "propertyNames": {"minLength": 1, "maxLength": METADATA_KEY_MAX_LENGTH},
        "additionalProperties": {"type": "string", "maxLength": METADATA_VALUE_MAX_LENGTH},
        "description": (
            f"Your own references (an order, a customer id): string keys of 1 to {METADATA_KEY_MAX_LENGTH} "
            f"characters and string values of up to {METADATA_VALUE_MAX_LENGTH}, at most {METADATA_MAX_KEYS} keys. "
            "Returned as sent in every answer and in every webhook event's `data`; erased by a redaction."
        ),
        "example": {"orderId": "A-1042"},
    }
)
class StrictMetadataField(serializers.Field):
    """A JSON object of string keys and string values, within Stripe's limits; errors name the key at fault."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise ValidationError("must be an object of string keys and string values", code="invalid_type")
        if len(data) > METADATA_MAX_KEYS:
            raise ValidationError(f"must have at most {METADATA_MAX_KEYS} keys", code="out_of_range")
        errors = {}
        for key, value in data.items():
            if not 1 <= len(key) <= METADATA_KEY_MAX_LENGTH:
                errors[key] = f"key must be 1 to {METADATA_KEY_MAX_LENGTH} characters long", "out_of_range"
            elif has_unstorable_characters(key):
                errors[key] = "key must not contain control, invisible or bidi characters", "invalid_value"
            elif not isinstance(value, str):
                errors[key] = "must be a string", "invalid_type"
            elif len(value) > METADATA_VALUE_MAX_LENGTH:
                errors[key] = f"must be at most {METADATA_VALUE_MAX_LENGTH} characters long", "out_of_range"
            elif has_unstorable_characters(value):
                errors[key] = "must not contain control, invisible or bidi characters", "invalid_value"
        if errors:
            raise ValidationError(
                {key: [ValidationError(message, code=code).detail[0]] for key, (message, code) in errors.items()}
            )
        return dict(data)

    def to_representation(self, value):
        return value or {}
