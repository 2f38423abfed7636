"""The API's shapes: strict input validation (snake_case in) and the session representation (camelCase out)."""

import ipaddress
from decimal import Decimal
from functools import lru_cache
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import URLValidator
from drf_spectacular.utils import OpenApiExample, extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import empty

from webhooks.selectors import webhook_host_is_forbidden

from ..client_access import client_secret_for
from ..flow_link import flow_signature_for, verification_url
from ..models import Mode, ProofAge, Reason, Status, VerificationSession
from ..reasons import reason_description
from ..subjects import SUBJECT_MAX_LENGTH, text_problem
from ..subjects import has_unstorable_characters as _has_unstorable_characters
from ..timestamps import iso_ms

AGE_LIMIT_MIN = 10
AGE_LIMIT_MAX = 21
URL_MAX_LENGTH = 2048
# Stripe's limits for `metadata`: partners who know one know the other.
METADATA_MAX_KEYS = 50
METADATA_KEY_MAX_LENGTH = 40
METADATA_VALUE_MAX_LENGTH = 500
_LOOPBACK_NAMES = ("localhost",)
_url_syntax = URLValidator(schemes=["http", "https"])


@lru_cache(maxsize=1024)
def _url_syntax_ok(url: str) -> bool:
    """Django's URL check, remembered: a partner sends the same few callback URLs with every session."""
    try:
        _url_syntax(url)
    except DjangoValidationError:
        return False
    return True


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


def _is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@extend_schema_field({"type": "string", "format": "uri", "maxLength": URL_MAX_LENGTH, "nullable": True})
class StrictUrlField(serializers.Field):
    """An absolute http(s) URL; `https_only` and `public_host` tighten it for webhook targets."""

    def __init__(self, *, https_only: bool = False, public_host: bool = False, **kwargs):
        self.https_only, self.public_host = https_only, public_host
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)  # an explicit null means "not set", like an absent field
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise ValidationError("must be a string holding an absolute URL", code="invalid_type")
        if len(data) > URL_MAX_LENGTH:
            raise ValidationError(f"must be at most {URL_MAX_LENGTH} characters", code="out_of_range")
        if _has_unstorable_characters(data):
            raise ValidationError("must be an absolute http or https URL", code="invalid_url")
        if not _url_syntax_ok(data):
            raise ValidationError("must be an absolute http or https URL", code="invalid_url")
        parts = urlsplit(data)
        host = parts.hostname or ""
        try:
            port = parts.port
        except ValueError:  # past 65535: the syntax check lets any five digits through
            port = -1
        if port is not None and not 1 <= port <= 65535:
            raise ValidationError("must have a port between 1 and 65535", code="invalid_url")
        if parts.username is not None or parts.password is not None:
            # Credentials would sit in our database and logs, and the webhook transport never sends them.
            raise ValidationError("must not contain a user name or password", code="invalid_url")
        if parts.scheme != "https":
            http_allowed = not self.https_only and (settings.DEBUG or _is_loopback(host))
            if not http_allowed:
                raise ValidationError("must use https", code="https_required")
        if self.public_host and webhook_host_is_forbidden(host):
            raise ValidationError("must point to a public host", code="forbidden_host")
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
            elif _has_unstorable_characters(key):
                errors[key] = "key must not contain control, invisible or bidi characters", "invalid_value"
            elif not isinstance(value, str):
                errors[key] = "must be a string", "invalid_type"
            elif len(value) > METADATA_VALUE_MAX_LENGTH:
                errors[key] = f"must be at most {METADATA_VALUE_MAX_LENGTH} characters long", "out_of_range"
            elif _has_unstorable_characters(value):
                errors[key] = "must not contain control, invisible or bidi characters", "invalid_value"
        if errors:
            raise ValidationError(
                {key: [ValidationError(message, code=code).detail[0]] for key, (message, code) in errors.items()}
            )
        return dict(data)

    def to_representation(self, value):
        return value or {}


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
    notification_url = StrictUrlField(https_only=True, public_host=True)
    metadata = StrictMetadataField()


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


@extend_schema_field({"type": "string", "format": "date-time", "example": "2026-11-22T10:15:30.123Z"})
class TimestampField(serializers.Field):
    """ISO 8601 UTC with milliseconds and `Z` (CONTRACT 2)."""

    def to_representation(self, value):
        return iso_ms(value)


@extend_schema_field({"type": "string", "format": "date-time", "nullable": True, "example": "2026-11-22T10:15:30.123Z"})
class OptionalTimestampField(TimestampField):
    """A time that may not have come yet: `null` until then."""

    def to_representation(self, value):
        return iso_ms(value) if value else None


@extend_schema_field({"type": "string", "format": "uri", "nullable": True})
class OptionalUrlOutputField(serializers.Field):
    """An echoed URL: always present, `null` when the partner did not send one."""

    def to_representation(self, value):
        return value or None


class SessionOutputSerializer(serializers.Serializer):
    """The `session` object (spec 2.2) plus the contract's extra fields."""

    sessionId = serializers.CharField(source="id")
    status = serializers.ChoiceField(choices=Status.choices)
    subject = serializers.CharField()
    ageLimit = serializers.IntegerField(source="age_limit")
    mode = serializers.ChoiceField(choices=Mode.choices)
    reason = serializers.SerializerMethodField()
    expiresAt = TimestampField(source="expires_at")
    callbackUrl = OptionalUrlOutputField(source="callback_url")
    cancelUrl = OptionalUrlOutputField(source="cancel_url")
    notificationUrl = OptionalUrlOutputField(source="notification_url")
    createdAt = TimestampField(source="created_at")
    updatedAt = TimestampField(source="updated_at")
    metadata = StrictMetadataField(help_text="Your references as sent at creation; `{}` when none or redacted.")
    redactedAt = OptionalTimestampField(
        source="redacted_at",
        help_text="When the session's personal data was erased (POST /v1/sessions/{id}/redact); null until then.",
    )

    @extend_schema_field(
        {"type": "string", "enum": [*Reason.values, None], "nullable": True, "description": reason_description()}
    )
    def get_reason(self, session) -> str | None:
        return session.reason or None


class SessionCreatedOutputSerializer(SessionOutputSerializer):
    """At creation only: the flow token, its signature and the ready-made link to the hosted flow."""

    sessionToken = serializers.SerializerMethodField()
    signature = serializers.SerializerMethodField()
    verificationUrl = serializers.SerializerMethodField()
    clientSecret = serializers.SerializerMethodField(
        help_text="For SDK mode: hand this (never your secret key) to your page or app; it opens this one session."
    )

    def get_clientSecret(self, session) -> str:
        return client_secret_for(session, self.context["token"])

    def get_sessionToken(self, session) -> str:
        return self.context["token"]

    def get_signature(self, session) -> str:
        return flow_signature_for(session, self.context["token"])

    def get_verificationUrl(self, session) -> str:
        return verification_url(session, self.context["token"])


class AgeEstimationOutputSerializer(serializers.Serializer):
    ageLimit = serializers.IntegerField(source="session.age_limit")
    estimatedAge = serializers.SerializerMethodField()
    ageConfidence = serializers.SerializerMethodField()

    def get_estimatedAge(self, result) -> float:
        return round(result.estimated_age, 1)

    def get_ageConfidence(self, result) -> float:
        return round(result.age_confidence, 3)


class LivenessOutputSerializer(serializers.Serializer):
    isLive = serializers.BooleanField(source="is_live")
    livenessScore = serializers.SerializerMethodField()
    signals = serializers.ListField(
        child=serializers.ChoiceField(choices=["virtualCamera", "timing", "replay", "flash", "passive"]),
        help_text=(
            "The attack signals that fired on the capture (docs/pad.md): virtualCamera (the camera's label "
            "names a virtual camera), timing (frames off the server's timing or cadence), replay (a frame "
            "repeated or looped), flash (the face did not reflect the screen colours the server issued for "
            "each frame), passive (the anti-spoofing model took the frontal face for a print or a screen). "
            "Empty when none fired."
        ),
    )

    def get_livenessScore(self, result) -> float:
        return round(result.liveness_score, 3)


class HolderMatchOutputSerializer(serializers.Serializer):
    score = serializers.FloatField(help_text="How alike the live face and the document's portrait are, 0..1.")
    passed = serializers.BooleanField(help_text="Whether the score reached the calibrated threshold.")


class ValidateDocOutputSerializer(serializers.Serializer):
    trueAge = serializers.IntegerField(source="true_age")
    birthdate = serializers.SerializerMethodField()
    holderMatch = HolderMatchOutputSerializer(
        allow_null=True,
        help_text="The live face compared with the document's portrait; null when no live capture came with the "
        "document (the tenant's presence policy is off).",
    )
    livenessChecked = serializers.BooleanField(
        help_text="Whether a passed liveness capture of this session came with the document. False: the "
        "document alone decided (presence policy off); check it before trusting the approval."
    )

    @extend_schema_field({"type": "string", "format": "date-time", "example": "2004-05-17T00:00:00.000Z"})
    def get_birthdate(self, result) -> str:
        # isoformat() pads the year to four digits, which strftime("%Y") does not on Linux.
        return f"{result.birthdate.isoformat()}T00:00:00.000Z"


class AgeCredentialIssuerOutputSerializer(serializers.Serializer):
    country = serializers.CharField(allow_null=True, help_text="ISO 3166 code of the trust anchor's country.")
    trustSource = serializers.CharField(
        help_text='Where the anchor was configured from: "pem:<name>", "vical:<name>", "sandbox".'
    )


class AgeCredentialOutputSerializer(serializers.Serializer):
    """A wallet credential's age proof (digital ID): one boolean, never a birth date."""

    kind = serializers.ChoiceField(choices=["mdoc"])
    docType = serializers.CharField(help_text="eu.europa.ec.av.1 or org.iso.18013.5.1.mDL")
    claim = serializers.CharField(help_text="The element that settled it, e.g. age_over_18.")
    value = serializers.BooleanField()
    ageLimit = serializers.IntegerField()
    issuer = AgeCredentialIssuerOutputSerializer()
    verifiedAt = TimestampField()


class AgePassOutputSerializer(serializers.Serializer):
    """What an age pass proved (reason `age_pass`), only as far as this session asked: nothing that is the same
    for one pass at every tenant and so would join the sessions it approved."""

    method = serializers.ChoiceField(
        choices=["face", "document", "digital_id"], help_text="How the age was proved when the pass was saved."
    )
    thresholds = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="The session's age limit, which the pass proved: [18]. Never the other limits a pass covers.",
    )
    proofAge = serializers.ChoiceField(
        choices=ProofAge.values,
        help_text="How long ago the age was proved, in coarse buckets (under_1_month: less than 31 days, "
        "under_3_months: less than 92, under_1_year: less than 366, over_1_year). No day of proof or expiry.",
    )


class SessionCreateResponseSerializer(serializers.Serializer):
    session = SessionCreatedOutputSerializer()


class SessionReadResponseSerializer(serializers.Serializer):
    session = SessionOutputSerializer()
    ageEstimation = AgeEstimationOutputSerializer(allow_null=True)
    liveness = LivenessOutputSerializer(allow_null=True)
    validateDoc = ValidateDocOutputSerializer(allow_null=True)
    ageCredential = AgeCredentialOutputSerializer(allow_null=True)
    agePass = AgePassOutputSerializer(allow_null=True)


class ProblemFieldErrorSerializer(serializers.Serializer):
    field = serializers.CharField(allow_null=True)
    code = serializers.CharField()
    message = serializers.CharField()


class ProblemSerializer(serializers.Serializer):
    """RFC 9457 problem details (`application/problem+json`): the body of every error; documentation only."""

    type = serializers.URLField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField()
    detail = serializers.CharField()
    errors = ProblemFieldErrorSerializer(many=True, required=False, help_text="Present on validation errors.")
    requestId = serializers.CharField()


def _related_or_none(session, name: str):
    try:
        return getattr(session, name)
    except VerificationSession._meta.get_field(name).related_model.DoesNotExist:
        return None


# The answers are built by hand below, not by the output serializers above: DRF's per-field machinery
# was a large share of a read's time. The serializers are the one declaration of the answers' fields
# (the OpenAPI document is generated from them), and the tests hold every answer to that document,
# no field more or less (tests/support/openapi.py).


def session_representation(session) -> dict:
    """The `session` object; `session` is a VerificationSession or a selectors.SessionRead."""
    created_at = iso_ms(session.created_at)
    return {
        "sessionId": session.id,
        "status": session.status,
        "subject": session.subject,
        "ageLimit": session.age_limit,
        "mode": session.mode,
        "reason": session.reason or None,
        "expiresAt": iso_ms(session.expires_at),
        "callbackUrl": session.callback_url or None,
        "cancelUrl": session.cancel_url or None,
        "notificationUrl": session.notification_url or None,
        "createdAt": created_at,
        "updatedAt": created_at if session.updated_at == session.created_at else iso_ms(session.updated_at),
        "metadata": session.metadata or {},
        "redactedAt": iso_ms(session.redacted_at) if session.redacted_at else None,
    }


def session_created_representation(session, token: str) -> dict:
    """At creation only: the session plus the flow token, its signature and the hosted flow's link.

    `session` is a VerificationSession or the new row's services.SessionRow.
    """
    representation = session_representation(session)
    signature = flow_signature_for(session, token, representation["expiresAt"])
    return {
        **representation,
        "sessionToken": token,
        "signature": signature,
        "verificationUrl": verification_url(session, token, signature),
        "clientSecret": client_secret_for(session, token),
    }


def session_read_representation(session) -> dict:
    """The answer of GET /v1/sessions/{id}; `session` is a VerificationSession or a selectors.SessionRead."""
    age = _related_or_none(session, "age_estimation")
    liveness = _related_or_none(session, "liveness")
    document = _related_or_none(session, "document")
    credential = _related_or_none(session, "age_credential")
    age_pass = _related_or_none(session, "age_pass")
    return {
        "session": session_representation(session),
        "ageEstimation": None
        if age is None
        else {
            "ageLimit": session.age_limit,
            "estimatedAge": round(age.estimated_age, 1),
            "ageConfidence": round(age.age_confidence, 3),
        },
        "liveness": None
        if liveness is None
        else {
            "isLive": liveness.is_live,
            "livenessScore": round(liveness.liveness_score, 3),
            "signals": list(liveness.signals or []),
        },
        # isoformat() pads the year to four digits, which strftime("%Y") does not on Linux.
        "validateDoc": None
        if document is None
        else {
            "trueAge": document.true_age,
            "birthdate": f"{document.birthdate.isoformat()}T00:00:00.000Z",
            "holderMatch": None
            if document.holder_match_score is None
            else {
                "score": round(document.holder_match_score, 3),
                "passed": bool(document.holder_match_passed),
            },
            "livenessChecked": document.liveness_checked,
        },
        "ageCredential": None
        if credential is None
        else {
            "kind": credential.kind,
            "docType": credential.doc_type,
            "claim": credential.claim,
            "value": credential.value,
            "ageLimit": session.age_limit,
            "issuer": {"country": credential.issuer_country or None, "trustSource": credential.trust_source},
            "verifiedAt": iso_ms(credential.created_at),
        },
        "agePass": None
        if age_pass is None
        else {
            "method": age_pass.method,
            "thresholds": list(age_pass.thresholds),
            "proofAge": age_pass.proof_age,
        },
    }
