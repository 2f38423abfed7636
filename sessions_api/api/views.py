"""The partner REST API: POST /v1/sessions and GET /v1/sessions/{id} (spec section 4)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.views import APIView

from ..selectors import SessionNotFound, session_read_for_tenant
from ..services import session_create
from .authentication import CachedApiKeyAuthentication
from .idempotency import HEADER as IDEMPOTENCY_HEADER
from .idempotency import REPLAYED_HEADER, idempotent
from .lean import json_answer, lean_acceptable, lean_dispatch, lean_view_check
from .problems import PROBLEM_CONTENT_TYPE, ApiProblem
from .serializers.inputs import SessionCreateInputSerializer
from .serializers.outputs import ProblemSerializer, SessionCreateResponseSerializer, SessionReadResponseSerializer
from .serializers.representations import session_created_representation, session_read_representation
from .serializers.validation import validated_input
from .throttle import ApiKeyRateThrottle


def response_headers(success: int) -> list[OpenApiParameter]:
    """The response headers of CONTRACT 2; the rate limit ones come with every answer to a known key."""
    limited = [success, 404, 409, 413, 415, 422, 429] if success == 201 else [success, 404, 429]
    return [
        OpenApiParameter(
            "X-Request-Id",
            OpenApiTypes.STR,
            OpenApiParameter.HEADER,
            response=True,
            description="Echo of a valid incoming X-Request-Id, else generated; quote it to support.",
        ),
        OpenApiParameter(
            "RateLimit-Limit",
            OpenApiTypes.INT,
            OpenApiParameter.HEADER,
            response=limited,
            description="Size of this API key's token bucket (its burst).",
        ),
        OpenApiParameter(
            "RateLimit-Remaining",
            OpenApiTypes.INT,
            OpenApiParameter.HEADER,
            response=limited,
            description="Requests left in the bucket now.",
        ),
        OpenApiParameter(
            "RateLimit-Reset",
            OpenApiTypes.INT,
            OpenApiParameter.HEADER,
            response=limited,
            description="Seconds until the bucket is full again.",
        ),
        OpenApiParameter(
            "Retry-After",
            OpenApiTypes.INT,
            OpenApiParameter.HEADER,
            response=[429, 503],
            description="Seconds to wait before retrying.",
        ),
    ]


def problems(*statuses: int) -> dict:
    """The documented error responses of an operation, all RFC 9457 bodies."""
    return {
        (code, PROBLEM_CONTENT_TYPE): OpenApiResponse(ProblemSerializer, description="RFC 9457 problem details")
        for code in statuses
    }


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    """Documents the `X-API-Key` header as the API's security scheme."""

    target_class = "sessions_api.api.authentication.ApiKeyAuthentication"
    match_subclasses = True  # the API's views use its cached variant
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "X-API-Key",
            "description": "The tenant's secret API key: av_live_... (live) or av_test_... (sandbox).",
        }


def require_json_body(request) -> None:
    """A POST must say it is JSON (415 otherwise) and carry a body (400 malformed_json otherwise)."""
    if request.content_type.split(";")[0].strip().lower() != "application/json":
        raise ApiProblem(
            status_code=415,
            code="unsupported_media_type",
            detail="Send the body as JSON with Content-Type: application/json.",
        )
    if request.stream is None:
        raise ApiProblem(status_code=400, code="malformed_json", detail="The request body is empty.")


class ApiContentNegotiation(DefaultContentNegotiation):
    """DRF's negotiation, with what partners send (no Accept, `*/*`, `application/json`) answered at once."""

    def select_renderer(self, request, renderers, format_suffix=None):
        accept = request.META.get("HTTP_ACCEPT", "*/*")
        if (
            len(renderers) == 1
            and accept in ("*/*", renderers[0].media_type)
            and not format_suffix
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)


class ApiView(APIView):
    """Base of every partner endpoint: API key authentication, per-key rate limit and its headers."""

    content_negotiation_class = ApiContentNegotiation

    # The rate limiter's Redis round trip confirms a key that authentication took from its cache.
    authentication_classes = [CachedApiKeyAuthentication]
    throttle_classes = [ApiKeyRateThrottle]
    # Methods served by lean.py, without DRF's per-request machinery, when the request asks for plain JSON.
    # Their handlers get a lean.LeanRequest: use request.user, .auth, .data, .stream, .query_params only.
    lean_methods: frozenset[str] = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        lean_view_check(cls)  # refused here, at import, if lean dispatch would not honour its classes

    def throttled(self, request, wait):
        state = getattr(request, "rate_limit_state", None)
        super().throttled(request, state.retry_after if state else 1)

    def dispatch(self, request, *args, **kwargs):
        try:
            if request.method in self.lean_methods and lean_acceptable(request):
                return lean_dispatch(self, request, *args, **kwargs)
            return super().dispatch(request, *args, **kwargs)
        finally:
            pending = getattr(getattr(self, "request", None), "rate_limit_pending", None)
            if pending is not None:  # the request failed before finalize_response read the answer
                pending.abandon()

    def finalize_response(self, request, response, *args, **kwargs):
        response = self.rate_limit_decided(request, response)
        response = super().finalize_response(request, response, *args, **kwargs)
        return self.with_api_headers(request, response)

    def rate_limit_decide_now(self, request) -> None:
        """Before a view's first write: the rate limit's answer, if still on the wire, decides (429, 401, 403)."""
        pending = getattr(request, "rate_limit_pending", None)
        if pending is not None:
            request.rate_limit_pending = None
            if not ApiKeyRateThrottle.decide(request, pending):
                self.throttled(request, None)

    def rate_limit_decided(self, request, response):
        """The answer, or the refusal that a read's rate-limit answer (read after the view ran) calls for."""
        pending = getattr(request, "rate_limit_pending", None)
        if pending is not None:
            # A read-only request ran while its rate-limit answer travelled; that answer still decides.
            request.rate_limit_pending = None
            try:
                if not ApiKeyRateThrottle.decide(request, pending):
                    self.throttled(request, None)
            except APIException as refusal:
                response = self.handle_exception(refusal)
        return response

    @staticmethod
    def with_api_headers(request, response):
        # X-API-Key is not Authorization, so nothing else tells a shared cache these answers are private.
        response["Cache-Control"] = "no-store"
        state = getattr(request, "rate_limit_state", None)
        if state is not None:
            for name, value in state.headers().items():
                response[name] = value
        return response


def session_not_found() -> ApiProblem:
    # The same body for an unknown id and another tenant's id: nothing tells them apart (CONTRACT 2).
    return ApiProblem(status_code=404, code="session_not_found", detail="No session with this id.")


class SessionCreateApi(ApiView):
    lean_methods = frozenset(("POST",))
    # The body is parsed and validated while the rate limit's answer travels (without Idempotency-Key,
    # whose claim writes first); any refusal still wins over the view's own answer.
    rate_limit_decided_before_writing = True
    InputSerializer = SessionCreateInputSerializer

    @extend_schema(
        operation_id="sessions_create",
        summary="Create a verification session",
        description=(
            "Creates a session in status `initiated` for one of your users. The response carries, once only, "
            "the `sessionToken`, its `signature` and the `verificationUrl` of the hosted flow."
        ),
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="1 to 255 characters. The same key with the same body within 24 h replays "
                "the first response (header Idempotent-Replayed: true).",
            ),
            OpenApiParameter(
                REPLAYED_HEADER,
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                response=[201],
                enum=["true"],
                description="Present when this is a replay of an earlier response.",
            ),
            *response_headers(201),
        ],
        request=SessionCreateInputSerializer,
        responses={201: SessionCreateResponseSerializer, **problems(400, 401, 403, 409, 411, 413, 415, 422, 429, 503)},
    )
    def post(self, request):
        require_json_body(request)
        return idempotent(request, request.user.tenant, lambda: self._create(request))

    def _create(self, request):
        fields = validated_input(self.InputSerializer, request.data)
        self.rate_limit_decide_now(request)
        created = session_create(tenant=request.user.tenant, api_key=request.auth, **fields)
        body = {"session": session_created_representation(created.row, created.token)}
        return json_answer(request, body, status.HTTP_201_CREATED)


class SessionDetailApi(ApiView):
    lean_methods = frozenset(("GET",))

    @extend_schema(
        operation_id="sessions_retrieve",
        summary="Read a session, its status and its results",
        description=(
            "`ageEstimation`, `liveness`, `validateDoc`, `ageCredential` and `agePass` are always present, each "
            "`null` until that check has produced a result. `ageCredential` is the age proof of a wallet credential "
            "(digital ID): `validateDoc` stays `null` then, as no birth date is ever read. `agePass` is what an age "
            "pass the user saved earlier proved (reason `age_pass`): the session's limit and the proof's age in "
            "buckets, nothing that names the pass or joins it across tenants."
        ),
        parameters=response_headers(200),
        responses={200: SessionReadResponseSerializer, **problems(401, 403, 404, 429, 503)},
    )
    def get(self, request, session_id: str):
        try:
            session = session_read_for_tenant(tenant=request.user.tenant, session_id=session_id, mode=request.auth.mode)
        except SessionNotFound:
            raise session_not_found()
        return json_answer(request, session_read_representation(session))
