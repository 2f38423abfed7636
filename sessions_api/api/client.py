"""The client endpoints of SDK mode under /v1/client/: called from a partner's page or app with a publishable key.

CORS is answered only for the key's allowed origins, never in credentials mode (no cookies are read
here). Error bodies are readable from any origin (`Access-Control-Allow-Origin: *`): they hold no
session data, and without them the SDK could not tell a developer that their page's origin is not
allowed. A request with no `Origin` (a native app) is not a browser, so there is no origin to check.
A secret key sent here is refused and flagged to the tenant: it has been exposed.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from tenants.api_keys import SECRET_KEY_PREFIXES
from tenants.models import PublishableKey
from tenants.selectors import api_key_resolve, publishable_key_resolve
from tenants.services import api_key_flag_exposed, publishable_key_touch

from ..client_access import (
    ClientAccessRefused,
    client_secret_for,
    client_session_create,
    client_session_creation_refused,
    launch_code_issue,
    launch_url,
    session_for_client_secret,
    session_open_for_client,
)
from ..timestamps import iso_ms
from .authentication import unauthenticated_request_refused
from .problems import ApiProblem
from .serializers.fields import SUBJECT_MAX_LENGTH, StrictStringField
from .views import ApiContentNegotiation, problems, require_json_body

CLIENT_HEADERS = "Authorization, Content-Type"
PREFLIGHT_MAX_AGE = "600"

KEY_PARAMETER = OpenApiParameter(
    "key",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    required=True,
    description="Your publishable key, av_pk_live_... or av_pk_test_... (public; never a secret key).",
)
CLIENT_SECRET_HEADER = OpenApiParameter(
    "Authorization",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    required=True,
    description="`Bearer <clientSecret>`: the session's clientSecret from POST /v1/sessions (never in a URL).",
)


def _refused(refusal: ClientAccessRefused) -> ApiProblem:
    return ApiProblem(status_code=refusal.status, code=refusal.code, detail=refusal.detail)


class ClientApiView(APIView):
    """Base of the client endpoints: publishable key from `?key=`, origin allowlist, CORS, secret keys refused."""

    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = []
    content_negotiation_class = ApiContentNegotiation
    publishable_key: PublishableKey | None = None

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        self.publishable_key = self._key(request)
        origin = request.headers.get("Origin")
        if origin is not None and origin not in self.publishable_key.allowed_origins:
            raise ApiProblem(
                status_code=403,
                code="origin_not_allowed",
                detail=f"The origin {origin} is not allowed for this publishable key. Add it to the key's allowed "
                f"origins in the dashboard (SDK keys), exactly as the browser sends it.",
            )
        publishable_key_touch(self.publishable_key)

    def _key(self, request) -> PublishableKey:
        raw = request.query_params.get("key", "").strip()
        secret = next(
            (
                value
                for value in (raw, request.headers.get("X-API-Key", ""), self._bearer(request))
                if value.startswith(SECRET_KEY_PREFIXES)
            ),
            None,
        )
        if secret is not None:
            exposed = api_key_resolve(secret)
            if exposed is not None:
                api_key_flag_exposed(exposed)
            raise ApiProblem(
                status_code=401,
                code="secret_key_not_allowed",
                detail="A secret API key (av_live_/av_test_) was sent from a browser or app. It must never leave your "
                "backend: use a publishable key (av_pk_...) here, and rotate the secret key now (it is flagged "
                "as exposed in your dashboard).",
            )
        if not raw:
            raise ApiProblem(
                status_code=401,
                code="missing_publishable_key",
                detail="Pass your publishable key as ?key=av_pk_live_... or av_pk_test_...",
            )
        key = publishable_key_resolve(raw)
        if key is None:
            raise ApiProblem(
                status_code=401,
                code="invalid_publishable_key",
                detail="This publishable key is unknown or has been revoked: copy a current one from the "
                "dashboard (SDK keys).",
            )
        return key

    def handle_exception(self, exc):
        """A failed credential (every 401 here) spends a token of the client address's budget, the partner
        API's: past it, 429 instead of 401, so keys and client secrets cannot be guessed at speed."""
        if isinstance(exc, ApiProblem) and exc.status_code == 401:
            refused = unauthenticated_request_refused(self.request)
            if refused is not None:
                exc = ApiProblem(
                    status_code=429,
                    code="rate_limited",
                    headers={"Retry-After": str(refused.retry_after)},
                    detail=f"Too many failed credentials from this address. Retry in {refused.retry_after} s.",
                )
        return super().handle_exception(exc)

    @staticmethod
    def _bearer(request) -> str:
        scheme, _, value = request.headers.get("Authorization", "").partition(" ")
        return value.strip() if scheme.lower() == "bearer" else ""

    def client_secret(self, request) -> str:
        value = self._bearer(request)
        if not value:
            raise ApiProblem(
                status_code=401,
                code="invalid_client_secret",
                detail="Send the session's clientSecret as `Authorization: Bearer <clientSecret>`.",
            )
        return value

    def session(self, request):
        try:
            return session_for_client_secret(key=self.publishable_key, client_secret=self.client_secret(request))
        except ClientAccessRefused as refusal:
            raise _refused(refusal) from None

    def options(self, request, *args, **kwargs):
        # A preflight: reached only when the key is valid and the origin allowed (initial() refused otherwise).
        response = Response(status=status.HTTP_204_NO_CONTENT)
        response["Access-Control-Allow-Methods"] = "GET, POST"
        response["Access-Control-Allow-Headers"] = CLIENT_HEADERS
        response["Access-Control-Max-Age"] = PREFLIGHT_MAX_AGE
        return response

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        response["Cache-Control"] = "no-store"
        origin = request.headers.get("Origin")
        key = self.publishable_key
        if origin and key is not None and origin in key.allowed_origins:
            response["Access-Control-Allow-Origin"] = origin
        elif response.status_code >= 400 and request.method != "OPTIONS":
            response["Access-Control-Allow-Origin"] = "*"
        response["Vary"] = "Origin"
        return response


def _session_state(session) -> dict:
    return {
        "sessionId": session.id,
        "status": session.status,
        "reason": session.reason or None,
        "mode": session.mode,
        "expiresAt": iso_ms(session.expires_at),
    }


def _session_state_fields() -> dict:
    """The fields of `_session_state`'s answer, for the OpenAPI document (fresh field objects each time)."""
    return {
        "sessionId": serializers.CharField(),
        "status": serializers.CharField(),
        "reason": serializers.CharField(allow_null=True),
        "mode": serializers.CharField(),
        "expiresAt": serializers.CharField(),
    }


SESSION_STATE = inline_serializer("ClientSessionState", _session_state_fields())


class ClientConfigApi(ClientApiView):
    @extend_schema(
        operation_id="client_config",
        tags=["client (SDK mode)"],
        auth=[],
        parameters=[KEY_PARAMETER],
        summary="Preflight of the SDK: the key is valid, the origin allowed; the key's mode",
        responses={
            200: inline_serializer(
                "ClientConfig",
                {
                    "mode": serializers.CharField(),
                    "clientSessions": serializers.BooleanField(),
                    "ageLimit": serializers.IntegerField(allow_null=True),
                },
            ),
            **problems(401, 403),
        },
    )
    def get(self, request):
        key = self.publishable_key
        return Response(
            {
                "mode": key.mode,
                "clientSessions": key.client_sessions_enabled,
                "ageLimit": key.client_age_limit if key.client_sessions_enabled else None,
            }
        )


class ClientSessionStatusApi(ClientApiView):
    @extend_schema(
        operation_id="client_session_status",
        tags=["client (SDK mode)"],
        auth=[],
        parameters=[KEY_PARAMETER, CLIENT_SECRET_HEADER],
        summary="A session's status and reason, read with its client secret (never its subject or results)",
        description="A UI signal only: the official result is GET /v1/sessions/{id} on your backend, or the webhook.",
        responses={200: SESSION_STATE, **problems(400, 401, 403)},
    )
    def get(self, request):
        return Response(_session_state(self.session(request)))


class ClientSessionInputSerializer(serializers.Serializer):
    subject = StrictStringField(max_length=SUBJECT_MAX_LENGTH)  # the partner API's rule, sessions_api.subjects


class ClientSessionCreateApi(ClientApiView):
    @extend_schema(
        operation_id="client_sessions_create",
        tags=["client (SDK mode)"],
        auth=[],
        parameters=[KEY_PARAMETER],
        summary="Create a session from a browser or app (opt-in per publishable key)",
        description=(
            "Off by default. The age limit is the key's, every URL comes from the key's settings. Anyone can call "
            "this with your public key, so your backend must check `subject`, `ageLimit` and `mode` on "
            "GET /v1/sessions/{id} before trusting the result. Rate-limited per key and per client address."
        ),
        request=ClientSessionInputSerializer,
        responses={
            201: inline_serializer(
                "ClientSessionCreated", {**_session_state_fields(), "clientSecret": serializers.CharField()}
            ),
            **problems(400, 401, 403, 415, 429),
        },
    )
    def post(self, request):
        require_json_body(request)
        key = self.publishable_key
        refused = client_session_creation_refused(request, key.pk)
        if refused is not None:
            raise ApiProblem(
                status_code=429,
                code="rate_limited",
                headers={"Retry-After": str(refused.retry_after)},
                detail=f"Too many sessions created from clients. Retry in {refused.retry_after} s.",
            )
        serializer = ClientSessionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            created = client_session_create(key=key, subject=serializer.validated_data["subject"])
        except ClientAccessRefused as refusal:
            raise _refused(refusal) from None
        return Response(
            {**_session_state(created.session), "clientSecret": client_secret_for(created.session, created.token)},
            status=201,
        )


class LaunchInputSerializer(serializers.Serializer):
    returnUrl = serializers.CharField(required=False, allow_blank=True, max_length=2048)


class ClientLaunchApi(ClientApiView):
    @extend_schema(
        operation_id="client_launch",
        tags=["client (SDK mode)"],
        auth=[],
        parameters=[KEY_PARAMETER, CLIENT_SECRET_HEADER],
        summary="A one-time launch URL (60 s) opening the flow top-level or in an in-app browser tab",
        description=(
            "`returnUrl` must be one of the key's registered return URLs (it may use your app's own scheme). "
            "When the session is final the flow returns there with `session_id` and `status` query parameters."
        ),
        request=LaunchInputSerializer,
        responses={
            201: inline_serializer(
                "ClientLaunch",
                {
                    "launchUrl": serializers.CharField(),
                    "expiresAt": serializers.CharField(),
                },
            ),
            **problems(400, 401, 403, 409, 410, 415),
        },
    )
    def post(self, request):
        require_json_body(request)
        serializer = LaunchInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return_url = serializer.validated_data.get("returnUrl", "")
        if return_url and return_url not in self.publishable_key.return_urls:
            raise ApiProblem(
                status_code=400,
                code="return_url_not_registered",
                detail=f"{return_url} is not a registered return URL of this publishable key: register it "
                "in the dashboard (SDK keys), or leave returnUrl out.",
            )
        try:
            session = session_open_for_client(self.session(request))
        except ClientAccessRefused as refusal:
            raise _refused(refusal) from None
        issued = launch_code_issue(session=session, return_url=return_url)
        return Response({"launchUrl": launch_url(issued.code), "expiresAt": iso_ms(issued.expires_at)}, status=201)
