"""The API around the session (beside the spec's two endpoints): GET /v1/sessions, POST /v1/sessions/{id}/cancel
and POST /v1/sessions/{id}/redact.

The list shows each session exactly as GET /v1/sessions/{id} does, newest first, a page at a time with
an opaque cursor; a key sees only its own mode's sessions, as everywhere.
"""

import base64
import binascii
import json
from datetime import datetime

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from tenants.audit import Actor

from ..choices import Reason, Status
from ..retention import SessionNotFinal, session_redact
from ..selectors import SessionNotFound, session_get, sessions_list_for_tenant
from ..state_machine import CANCELLED_THROUGH_API, OPEN_STATUSES, TransitionNotAllowed, session_cancel
from .problems import ApiProblem
from .serializers.outputs import SessionReadResponseSerializer
from .serializers.representations import session_read_representation
from .views import ApiView, SessionCreateApi, problems, response_headers, session_not_found

LIST_LIMIT_DEFAULT = 20
LIST_LIMIT_MAX = 100
CANCEL_CAUSE = CANCELLED_THROUGH_API


def _cursor_encode(created_at: datetime, session_id: str) -> str:
    raw = json.dumps([created_at.isoformat(), session_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _cursor_decode(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created_at, session_id = json.loads(raw)
        return datetime.fromisoformat(created_at), str(session_id)
    except (binascii.Error, ValueError, TypeError, UnicodeDecodeError):
        raise ValidationError("is not a cursor this API returned", code="invalid_value") from None


class _QueryField(serializers.Field):
    """A query parameter: one value, never repeated."""

    def to_representation(self, value):
        return value


class StatusesQueryField(_QueryField):
    def to_internal_value(self, data):
        statuses = tuple(part.strip() for part in data.split(","))
        unknown = [status for status in statuses if status not in Status.values]
        if unknown:
            raise ValidationError(
                f"must be one or more of {', '.join(Status.values)}, comma-separated", code="invalid_value"
            )
        return statuses


class SubjectQueryField(_QueryField):
    def to_internal_value(self, data):
        if not 1 <= len(data) <= 255:
            raise ValidationError("must be 1 to 255 characters long", code="out_of_range")
        return data


class TimestampQueryField(_QueryField):
    def to_internal_value(self, data):
        try:
            value = datetime.fromisoformat(data.replace("Z", "+00:00").replace(" ", "+"))
        except ValueError:
            value = None
        if value is None or value.tzinfo is None:
            raise ValidationError(
                "must be an ISO 8601 date-time with a time zone, e.g. 2026-11-22T10:15:30Z", code="invalid_value"
            )
        return value


class LimitQueryField(_QueryField):
    def to_internal_value(self, data):
        if not data.isdigit() or not 1 <= int(data) <= LIST_LIMIT_MAX:
            raise ValidationError(f"must be a whole number from 1 to {LIST_LIMIT_MAX}", code="out_of_range")
        return int(data)


class CursorQueryField(_QueryField):
    def to_internal_value(self, data):
        return _cursor_decode(data)


class SessionListQuerySerializer(serializers.Serializer):
    status = StatusesQueryField(required=False)
    subject = SubjectQueryField(required=False)
    created_from = TimestampQueryField(required=False)
    created_before = TimestampQueryField(required=False)
    limit = LimitQueryField(required=False)
    cursor = CursorQueryField(required=False)

    def to_internal_value(self, data):
        errors = {}
        try:
            validated = super().to_internal_value({name: data.get(name) for name in data})
        except ValidationError as error:
            errors.update(error.detail)
            validated = {}
        for name in data:
            if name not in self.fields:
                errors[name] = [ValidationError("is not a known parameter", code="unknown_field").detail[0]]
            elif len(data.getlist(name)) > 1:
                errors[name] = [ValidationError("must be given once", code="invalid_value").detail[0]]
        if errors:
            raise ValidationError(errors)
        return validated


class SessionListResponseSerializer(serializers.Serializer):
    data = SessionReadResponseSerializer(many=True, help_text="Each session as GET /v1/sessions/{id} answers it.")
    hasMore = serializers.BooleanField(help_text="Whether another page follows.")
    nextCursor = serializers.CharField(
        allow_null=True, help_text="Pass as `cursor` for the next page; null on the last one."
    )


def _list_parameters() -> list[OpenApiParameter]:
    query = OpenApiParameter.QUERY
    return [
        OpenApiParameter(
            "status",
            OpenApiTypes.STR,
            query,
            description=f"Only sessions in these statuses, comma-separated ({', '.join(Status.values)}).",
            examples=[OpenApiExample("final", value="approved,denied")],
        ),
        OpenApiParameter("subject", OpenApiTypes.STR, query, description="Only this subject (exact match)."),
        OpenApiParameter(
            "created_from",
            OpenApiTypes.DATETIME,
            query,
            description="Only sessions created at or after this time (ISO 8601 with a time zone).",
        ),
        OpenApiParameter(
            "created_before",
            OpenApiTypes.DATETIME,
            query,
            description="Only sessions created before this time (ISO 8601 with a time zone).",
        ),
        OpenApiParameter(
            "limit",
            OpenApiTypes.INT,
            query,
            description=f"Page size, 1 to {LIST_LIMIT_MAX} (default {LIST_LIMIT_DEFAULT}).",
        ),
        OpenApiParameter("cursor", OpenApiTypes.STR, query, description="`nextCursor` of the previous page."),
        *response_headers(200),
    ]


class SessionCollectionApi(SessionCreateApi):
    """/v1/sessions: POST creates (the spec's endpoint), GET lists."""

    @extend_schema(
        operation_id="sessions_list",
        summary="List sessions, newest first",
        description="The sessions of the key's mode (live keys: live sessions, test keys: sandbox ones), newest "
        "first, each as `GET /v1/sessions/{id}` shows it. Filters combine; pages follow `nextCursor`.",
        parameters=_list_parameters(),
        responses={200: SessionListResponseSerializer, **problems(400, 401, 403, 429, 503)},
    )
    def get(self, request):
        query = SessionListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        filters = query.validated_data
        page = sessions_list_for_tenant(
            tenant=request.user.tenant,
            mode=request.auth.mode,
            statuses=filters.get("status", ()),
            subject=filters.get("subject"),
            created_from=filters.get("created_from"),
            created_before=filters.get("created_before"),
            after=filters.get("cursor"),
            limit=filters.get("limit", LIST_LIMIT_DEFAULT),
        )
        last = page.sessions[-1] if page.sessions else None
        return Response(
            {
                "data": [session_read_representation(session) for session in page.sessions],
                "hasMore": page.has_more,
                "nextCursor": _cursor_encode(last.created_at, last.id) if page.has_more else None,
            }
        )


class SessionCancelApi(ApiView):
    @extend_schema(
        operation_id="sessions_cancel",
        summary="Cancel an open session",
        description="Ends an open session as `denied` with reason `cancelled`, as the user's Cancel button does "
        "(the webhook is sent as for any final session). Cancelling a session already cancelled "
        "answers it again; any other final session is a 409. No request body.",
        request=None,
        parameters=response_headers(200),
        responses={200: SessionReadResponseSerializer, **problems(401, 403, 404, 409, 429, 503)},
    )
    def post(self, request, session_id: str):
        tenant, mode = request.user.tenant, request.auth.mode
        try:
            session = session_get(session_id=session_id, tenant=tenant, mode=mode)
            if session.status in OPEN_STATUSES:
                try:
                    session_cancel(session_id=session.id, cause=CANCEL_CAUSE)
                except TransitionNotAllowed:  # decided a moment ago: what won is answered below
                    pass
                session = session_get(session_id=session_id, tenant=tenant, mode=mode)
        except SessionNotFound:
            raise session_not_found()
        if session.reason != Reason.CANCELLED:
            raise ApiProblem(
                status_code=409,
                code="session_final",
                detail=f"The session is already {session.status} ({session.reason}); "
                "only an open session can be cancelled.",
            )
        return Response(session_read_representation(session))


class SessionRedactApi(ApiView):
    @extend_schema(
        operation_id="sessions_redact",
        summary="Erase a final session's personal data",
        description="For an erasure request (GDPR article 17): the session's `subject` and `metadata` are blanked "
        "and every check result (numbers, birth date) is deleted; `status`, `reason` and the timestamps stay, "
        "for your accounting, and `redactedAt` tells when. Past webhook deliveries of the session are deleted. "
        "Redacting again answers the same session and changes nothing. The redaction is written once to your "
        "audit log in the dashboard, naming the key's prefix and the address it came from. "
        "The `verification.redacted` event "
        "is sent if you opted into it. An open session is a 409 `session_not_final`: cancel it first. "
        "No request body.",
        request=None,
        parameters=response_headers(200),
        responses={200: SessionReadResponseSerializer, **problems(401, 403, 404, 409, 429, 503)},
    )
    def post(self, request, session_id: str):
        tenant, mode = request.user.tenant, request.auth.mode
        try:
            session = session_get(session_id=session_id, tenant=tenant, mode=mode)
            session_redact(
                session_id=session.id,
                actor=Actor.api_key(request.auth, ip_address=request.META.get("REMOTE_ADDR") or None),
                cause=f"redacted through the API with key {request.auth.prefix}",
            )
            session = session_get(session_id=session_id, tenant=tenant, mode=mode)
        except SessionNotFound:
            raise session_not_found()
        except SessionNotFinal:
            raise ApiProblem(
                status_code=409,
                code="session_not_final",
                detail=f"The session is still {session.status}; only a final session (approved or denied) can be "
                "redacted. Cancel it first (POST /v1/sessions/{id}/cancel).",
            )
        return Response(session_read_representation(session))
