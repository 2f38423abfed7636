"""The fast validation of request bodies (serializers.validated_input) answers what DRF answers.

DRF's `serializer_class(data=body).is_valid()` is the reference: on generated bodies, the fast path must
accept exactly what DRF accepts, with the same validated data, and refuse the rest with DRF's errors.
Serializers that add checks of their own (a `validate_<field>` method, `validate()`, a field's
validators) must be held to the same answers: the fast path may only skip DRF's generic steps, never a check.
"""

import json
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from rest_framework.exceptions import ValidationError

from sessions_api.api.serializers.inputs import SessionCreateInputSerializer
from sessions_api.api.serializers.validation import validated_input
from tests.support.api_bodies import bodies


class WithFieldMethod(SessionCreateInputSerializer):
    def validate_subject(self, value):
        if value.startswith("x"):
            raise ValidationError("must not start with x", code="invalid_value")
        return value.upper()


class WithObjectValidation(SessionCreateInputSerializer):
    def validate(self, attrs):
        if attrs.get("callback_url") and attrs.get("callback_url") == attrs.get("cancel_url"):
            raise ValidationError({"cancel_url": "must differ from callback_url"}, code="invalid_value")
        return attrs


def _no_digits(value):
    if any(char.isdigit() for char in value):
        raise ValidationError("must not contain digits", code="invalid_value")


class WithFieldValidator(SessionCreateInputSerializer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["subject"].validators.append(_no_digits)


SERIALIZERS = [SessionCreateInputSerializer, WithFieldMethod, WithObjectValidation, WithFieldValidator]


def drf_answer(serializer_class, body):
    serializer = serializer_class(data=body)
    if serializer.is_valid():
        return "valid", dict(serializer.validated_data)
    return "invalid", serializer.errors


def fast_answer(serializer_class, body):
    try:
        return "valid", dict(validated_input(serializer_class, body))
    except ValidationError as error:
        return "invalid", error.detail


@pytest.mark.parametrize("serializer_class", SERIALIZERS, ids=lambda cls: cls.__name__)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=bodies)
def test_the_fast_path_accepts_and_refuses_what_drf_does(serializer_class, body, db):
    body = json.loads(json.dumps(body), parse_float=Decimal)  # as the API's parser reads it
    assert fast_answer(serializer_class, body) == drf_answer(serializer_class, body)


@pytest.mark.parametrize(
    "serializer_class, body",
    [
        (WithFieldMethod, {"subject": "x-42", "age_limit": 18}),
        (WithFieldMethod, {"subject": "user-42", "age_limit": 18}),
        (
            WithObjectValidation,
            {"subject": "u", "age_limit": 18, "callback_url": "https://a.example/", "cancel_url": "https://a.example/"},
        ),
        (WithFieldValidator, {"subject": "user-42", "age_limit": 18}),
    ],
    ids=["validate_field refuses", "validate_field transforms", "validate refuses", "field validator refuses"],
)
def test_a_serializers_own_checks_run_on_the_fast_path_too(serializer_class, body, db):
    assert fast_answer(serializer_class, body) == drf_answer(serializer_class, body)
