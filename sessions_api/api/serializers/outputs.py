"""The API's answers declared as serializers, camelCase out: the OpenAPI document is generated from them.

The hot answers are built by hand (representations.py); tests hold every answer to the document.
"""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ...client_access import client_secret_for
from ...flow_link import flow_signature_for, verification_url
from ...models import Mode, ProofAge, Reason, Status
from ...reasons import reason_description
from ...timestamps import iso_ms
from .fields import StrictMetadataField


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
