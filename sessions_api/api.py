"""The partner REST API: POST /v1/sessions and GET /v1/sessions/{id} (spec section 4)."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from .idempotency import HEADER as IDEMPOTENCY_HEADER
from .idempotency import idempotent
from .problems import ApiProblem
from .rate_limit import ApiKeyRateThrottle
from .selectors import SessionNotFound, session_get_for_tenant
from .serializers import (
    SessionCreatedOutputSerializer,
    SessionCreateInputSerializer,
    SessionCreateResponseSerializer,
    SessionReadResponseSerializer,
    session_read_representation,
)
from .services import session_create

PROBLEM = OpenApiResponse(OpenApiTypes.OBJECT, description="RFC 9457 problem details (application/problem+json)")
API_KEY_PARAM = OpenApiParameter("X-API-Key", OpenApiTypes.STR, OpenApiParameter.HEADER, required=True,
                                 description="The tenant's secret API key (av_live_... or av_test_...)")


class ApiView(APIView):
    """Base of every partner endpoint: API key authentication, per-key rate limit and its headers."""

    throttle_classes = [ApiKeyRateThrottle]

    def throttled(self, request, wait):
        state = getattr(request, "rate_limit_state", None)
        super().throttled(request, state.retry_after if state else 1)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        state = getattr(request, "rate_limit_state", None)
        if state is not None:
            for name, value in state.headers().items():
                response[name] = value
        return response


def session_not_found(session_id: str) -> ApiProblem:
    return ApiProblem(status_code=404, code="session_not_found", detail=f"No session with id {session_id!r}.")


class SessionCreateApi(ApiView):
    InputSerializer = SessionCreateInputSerializer

    @extend_schema(
        operation_id="sessions_create",
        summary="Create a verification session",
        parameters=[
            API_KEY_PARAM,
            OpenApiParameter(IDEMPOTENCY_HEADER, OpenApiTypes.STR, OpenApiParameter.HEADER,
                             description="Replays the first response for 24 h when the same body is sent again."),
        ],
        request=SessionCreateInputSerializer,
        responses={201: SessionCreateResponseSerializer, 400: PROBLEM, 401: PROBLEM, 403: PROBLEM, 409: PROBLEM,
                   413: PROBLEM, 415: PROBLEM, 422: PROBLEM, 429: PROBLEM, 503: PROBLEM},
    )
    def post(self, request):
        if request.content_type.split(";")[0].strip().lower() != "application/json":
            raise ApiProblem(status_code=415, code="unsupported_media_type",
                             detail="Send the body as JSON with Content-Type: application/json.")
        if request.stream is None:
            raise ApiProblem(status_code=400, code="malformed_json", detail="The request body is empty.")
        client = request.user
        return idempotent(request, client.tenant, lambda: self._create(request))

    def _create(self, request):
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        created = session_create(tenant=request.user.tenant, api_key=request.auth, **serializer.validated_data)
        body = {"session": SessionCreatedOutputSerializer(created.session, context={"token": created.token}).data}
        return Response(body, status=status.HTTP_201_CREATED)


class SessionDetailApi(ApiView):
    @extend_schema(
        operation_id="sessions_retrieve",
        summary="Read a session, its status and its results",
        parameters=[API_KEY_PARAM],
        responses={200: SessionReadResponseSerializer, 401: PROBLEM, 403: PROBLEM, 404: PROBLEM, 429: PROBLEM,
                   503: PROBLEM},
    )
    def get(self, request, session_id: str):
        try:
            session = session_get_for_tenant(tenant=request.user.tenant, session_id=session_id)
        except SessionNotFound:
            raise session_not_found(session_id)
        return Response(session_read_representation(session))
