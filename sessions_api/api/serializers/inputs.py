"""The API's request bodies: strict serializers (a field not declared is an error), snake_case in."""

from drf_spectacular.utils import OpenApiExample, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from ...subjects import SUBJECT_MAX_LENGTH
from .fields import (
    AGE_LIMIT_MAX,
    AGE_LIMIT_MIN,
    StrictIntegerField,
    StrictMetadataField,
    StrictStringField,
    StrictUrlField,
)


class StrictInputSerializer(serializers.Serializer):
    """A request body of Strict* fields: a field not declared is an error, and so is a null where none is allowed."""

    default_error_messages = {"required": "is required"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.error_messages["required"] = "is required"
            field.error_messages["null"] = "must not be null"

    def to_internal_value(self, data):
        errors = {}
        try:
            validated = super().to_internal_value(data)
        except ValidationError as error:
            errors.update(error.detail)
            validated = None
        for name in data if isinstance(data, dict) else ():
            if name not in self.fields:
                errors[name] = [ValidationError("is not a known field", code="unknown_field").detail[0]]
        if errors:
            raise ValidationError(errors)
        return validated


@extend_schema_serializer(
    examples=[
        OpenApiExample(
            "A session for one user",
            request_only=True,
            description=(
                'Runs as is in Swagger\'s "Try it out" (add `notification_url` with your HTTPS webhook receiver).'
            ),
            value={
                "subject": "user-42",
                "age_limit": 18,
                "callback_url": "https://shop.example/verified",
                "cancel_url": "https://shop.example/cancelled",
            },
        )
    ]
)
class SessionCreateInputSerializer(StrictInputSerializer):
    subject = StrictStringField(max_length=SUBJECT_MAX_LENGTH)
    age_limit = StrictIntegerField(min_value=AGE_LIMIT_MIN, max_value=AGE_LIMIT_MAX)
    callback_url = StrictUrlField()
    cancel_url = StrictUrlField()
    notification_url = StrictUrlField(webhook=True)
    metadata = StrictMetadataField()
