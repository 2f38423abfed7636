"""The sandbox endpoint POST /v1/test/sessions/{id}/advance (CONTRACT 7): test keys drive a session's outcome."""

from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from tenants.models import ApiKey

from ..models import Mode
from ..sandbox import REASONS_OF_TARGET, TARGETS, NotASandboxSession, sandbox_advance
from ..selectors import SessionNotFound, session_get
from ..state_machine import TransitionNotAllowed
from .problems import ApiProblem
from .serializers.outputs import SessionReadResponseSerializer
from .serializers.representations import session_read_representation
from .views import ApiView, problems, require_json_body, response_headers, session_not_found


def one_of_field(values) -> type[serializers.Field]:
    """A field taking one string of `values` exactly (no coercion), documented as that enum."""
    values = [str(value) for value in values]

    @extend_schema_field({"type": "string", "enum": values})
    class OneOfField(serializers.Field):
        def to_internal_value(self, data):
            if not isinstance(data, str):
                raise ValidationError("must be a string", code="invalid_type")
            if data not in values:
                raise ValidationError(f"must be one of {', '.join(values)}", code="invalid_value")
            return data

        def to_representation(self, value):
            return value

    return OneOfField


TargetStatusField = one_of_field(TARGETS)
SandboxReasonField = one_of_field(reason for reasons in REASONS_OF_TARGET.values() for reason in reasons)


@extend_schema_serializer(
    examples=[
        OpenApiExample("Approve", request_only=True, value={"to": "approved"}),
        OpenApiExample(
            "Deny with an expired document", request_only=True, value={"to": "denied", "reason": "document_expired"}
        ),
    ]
)
class SandboxAdvanceInputSerializer(serializers.Serializer):
    to = TargetStatusField(error_messages={"required": "is required", "null": "must not be null"})
    reason = SandboxReasonField(
        required=False,
        error_messages={"null": "must not be null"},
        help_text="For `approved` or `denied` only: the reason the session ends with. Without it: `age_estimation` "
        "or `document` (approved) and `liveness_failed` or `underage_document` (denied), by the step "
        "the session is on.",
    )

    def to_internal_value(self, data):
        unknown = [name for name in data if name not in self.fields]
        try:
            validated = super().to_internal_value(data)
        except ValidationError as error:
            errors = dict(error.detail)
        else:
            errors = {}
        for name in unknown:
            errors[name] = [ValidationError("is not a known field", code="unknown_field").detail[0]]
        if (
            not errors
            and validated.get("reason")
            and validated["reason"] not in REASONS_OF_TARGET.get(validated["to"], ())
        ):
            allowed = ", ".join(REASONS_OF_TARGET.get(validated["to"], ())) or "none"
            errors["reason"] = [
                ValidationError(f"does not fit to={validated['to']}; allowed: {allowed}", code="invalid_value").detail[
                    0
                ]
            ]
        if errors:
            raise ValidationError(errors)
        return validated


class SandboxAdvanceApi(ApiView):
    InputSerializer = SandboxAdvanceInputSerializer

    @extend_schema(
        operation_id="sandbox_sessions_advance",
        summary="Sandbox: move a test session to an outcome (test keys only)",
        description="Walks the same state machine as a real verification, stores fixed result numbers "
        "and sends the same webhook. A live key gets 404. With `reason`, a session can end with "
        "any reason a real one can (`document_expired`, `attempts_exceeded`, `expired`, ...); "
        "a reason that needs the document step takes the session there.",
        parameters=response_headers(200),
        request=SandboxAdvanceInputSerializer,
        responses={200: SessionReadResponseSerializer, **problems(400, 401, 403, 404, 409, 411, 413, 415, 429, 503)},
    )
    def post(self, request, session_id: str):
        if request.auth.mode != ApiKey.Mode.TEST:
            # Live keys see no sandbox at all: the endpoint does not exist for them.
            raise ApiProblem(
                status_code=404,
                code="not_found",
                detail="The sandbox endpoint is available to test keys (av_test_...) only.",
            )
        require_json_body(request)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            session = session_get(session_id=session_id, tenant=request.user.tenant, mode=Mode.TEST)
            sandbox_advance(
                session_id=session.id,
                to=serializer.validated_data["to"],
                reason=serializer.validated_data.get("reason", ""),
            )
        except (SessionNotFound, NotASandboxSession):
            raise session_not_found()
        except TransitionNotAllowed:
            target = serializer.validated_data["to"]
            if serializer.validated_data.get("reason"):
                target += f" ({serializer.validated_data['reason']})"
            raise ApiProblem(
                status_code=409,
                code="invalid_transition",
                detail=f"The session is {session.status} on the {session.step} step; it cannot move to {target}.",
            )
        session = session_get(session_id=session_id, tenant=request.user.tenant, mode=Mode.TEST)
        return Response(session_read_representation(session))
