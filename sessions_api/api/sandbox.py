"""The sandbox endpoint POST /v1/test/sessions/{id}/advance (CONTRACT 7): test keys drive a session's outcome."""
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from tenants.models import ApiKey

from ..models import Mode
from ..sandbox import TARGETS, NotASandboxSession, sandbox_advance
from ..selectors import SessionNotFound, session_get
from ..state_machine import TransitionNotAllowed
from .problems import ApiProblem
from .serializers import SessionReadResponseSerializer, session_read_representation
from .views import ApiView, problems, require_json_body, response_headers, session_not_found


@extend_schema_field({"type": "string", "enum": [str(target) for target in TARGETS]})
class TargetStatusField(serializers.Field):
    def to_internal_value(self, data):
        if not isinstance(data, str):
            raise ValidationError("must be a string", code="invalid_type")
        if data not in TARGETS:
            raise ValidationError(f"must be one of {', '.join(TARGETS)}", code="invalid_value")
        return data

    def to_representation(self, value):
        return value


class SandboxAdvanceInputSerializer(serializers.Serializer):
    to = TargetStatusField(error_messages={"required": "is required", "null": "must not be null"})

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
        if errors:
            raise ValidationError(errors)
        return validated


class SandboxAdvanceApi(ApiView):
    InputSerializer = SandboxAdvanceInputSerializer

    @extend_schema(
        operation_id="sandbox_sessions_advance",
        summary="Sandbox: move a test session to an outcome (test keys only)",
        description="Walks the same state machine as a real verification, stores fixed result numbers "
                    "and sends the same webhook. A live key gets 404.",
        parameters=response_headers(200),
        request=SandboxAdvanceInputSerializer,
        responses={200: SessionReadResponseSerializer, **problems(400, 401, 403, 404, 409, 411, 413, 415, 429, 503)},
    )
    def post(self, request, session_id: str):
        if request.auth.mode != ApiKey.Mode.TEST:
            # Live keys see no sandbox at all: the endpoint does not exist for them.
            raise ApiProblem(status_code=404, code="not_found",
                             detail="The sandbox endpoint is available to test keys (av_test_...) only.")
        require_json_body(request)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            session = session_get(session_id=session_id, tenant=request.user.tenant, mode=Mode.TEST)
            sandbox_advance(session_id=session.id, to=serializer.validated_data["to"])
        except (SessionNotFound, NotASandboxSession):
            raise session_not_found()
        except TransitionNotAllowed:
            raise ApiProblem(
                status_code=409, code="invalid_transition",
                detail=f"The session is {session.status}; it cannot move to {serializer.validated_data['to']}.",
            )
        session = session_get(session_id=session_id, tenant=request.user.tenant, mode=Mode.TEST)
        return Response(session_read_representation(session))
