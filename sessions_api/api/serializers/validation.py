"""Request bodies validated fast: a valid body checked field by field, a refused one worded exactly as DRF does."""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import empty

from .fields import StrictIntegerField, StrictMetadataField, StrictStringField, StrictUrlField
from .inputs import StrictInputSerializer

# Per serializer class: one instance, and its fields when it is only its fields (`_plain_fields_of`).
_prototypes: dict[type, tuple[serializers.Serializer, dict | None]] = {}
_STRICT_FIELDS = (StrictStringField, StrictIntegerField, StrictUrlField, StrictMetadataField)


def _field_is_plain(name: str, field, serializer_class) -> bool:
    """The field decides alone, by its own to_internal_value: DRF would run nothing else for it."""
    field_class = type(field)
    return (
        isinstance(field, _STRICT_FIELDS)
        and field_class.run_validation is serializers.Field.run_validation
        and field_class.validate_empty_values is serializers.Field.validate_empty_values
        and not field.read_only
        and field.default is empty
        and field.source == name
        and not field.validators
        and not hasattr(serializer_class, f"validate_{name}")  # DRF runs validate_<field> after the field
    )


def _plain_fields_of(prototype: serializers.Serializer) -> dict | None:
    """{name: field} when the serializer is only its Strict* fields, each deciding alone; else None.

    Such a serializer adds nothing to its fields' own checks (no validate() or validate_<field>, no
    validators, no defaults, no renamed sources, DRF's own steps or StrictInputSerializer's around
    them), so a body of known fields that each field accepts is valid as it is. Anything else goes
    through DRF: tests/sessions_api/test_validated_input.py holds the two to the same answers.
    """
    serializer_class = type(prototype)
    plain = (
        all(_field_is_plain(name, field, serializer_class) for name, field in prototype.fields.items())
        and serializer_class.validate is serializers.Serializer.validate
        and serializer_class.run_validation is serializers.Serializer.run_validation
        and serializer_class.to_internal_value
        in (serializers.Serializer.to_internal_value, StrictInputSerializer.to_internal_value)
        and not prototype.validators
    )
    return dict(prototype.fields) if plain else None


def _plainly_valid(fields: dict, data) -> dict | None:
    """What DRF's run_validation returns for `data`, when every key is a field and each field accepts its
    value; None for anything else, which DRF then checks and words the errors of."""
    if not isinstance(data, dict) or not data.keys() <= fields.keys():
        return None
    validated = {}
    for name, field in fields.items():
        value = data.get(name, empty)
        if value is empty:
            if field.required:
                return None
            continue  # not required and no default: absent from the validated data, as DRF leaves it
        if value is None:
            if not field.allow_null:
                return None
            validated[name] = None
            continue
        try:
            validated[name] = field.to_internal_value(value)
        except (ValidationError, DjangoValidationError):
            return None
    return validated


def validated_input(serializer_class: type[serializers.Serializer], data) -> dict:
    """The validated fields of a request body, or the ValidationError `serializer_class(data=...)` raises.

    A valid body is checked by one instance of the serializer made once per process (DRF copies every
    declared field for each new instance, which was most of the cost), field by field when the
    serializer is only its fields (`_plainly_valid`, without DRF's generic steps around each); a body
    it refuses goes through a new instance, so that the errors are worded and collected exactly as DRF does.
    """
    known = _prototypes.get(serializer_class)
    if known is None:
        prototype = serializer_class()
        known = _prototypes.setdefault(serializer_class, (prototype, _plain_fields_of(prototype)))
    prototype, fields = known
    if fields is not None:
        validated = _plainly_valid(fields, data)
        if validated is not None:
            return validated
    else:
        try:
            return prototype.run_validation(data)
        except (ValidationError, DjangoValidationError):
            pass
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
