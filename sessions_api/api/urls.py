"""Routes of the partner API under /v1/."""

from django.urls import path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from .client import ClientConfigApi, ClientLaunchApi, ClientSessionCreateApi, ClientSessionStatusApi
from .collection import SessionCancelApi, SessionCollectionApi, SessionRedactApi
from .redoc_bundle import redoc_bundle
from .sandbox import SandboxAdvanceApi
from .views import SessionDetailApi

_public = {"authentication_classes": [], "permission_classes": [AllowAny]}
# The reference pages fetch nothing from another host (Redoc's bundle comes without its cdn.redoc.ly logo,
# redoc_bundle.py); should an asset try, the browser refuses it.
DOCS_CONTENT_SECURITY_POLICY = "img-src 'self' data:; font-src 'self' data:; connect-src 'self'"


def _same_origin_assets(view):
    def docs_page(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response["Content-Security-Policy"] = DOCS_CONTENT_SECURITY_POLICY
        return response

    return docs_page


urlpatterns = [
    path("sessions", SessionCollectionApi.as_view(), name="sessions-create"),
    path("sessions/<str:session_id>", SessionDetailApi.as_view(), name="sessions-detail"),
    path("sessions/<str:session_id>/cancel", SessionCancelApi.as_view(), name="sessions-cancel"),
    path("sessions/<str:session_id>/redact", SessionRedactApi.as_view(), name="sessions-redact"),
    path("test/sessions/<str:session_id>/advance", SandboxAdvanceApi.as_view(), name="sandbox-advance"),
    path("client/config", ClientConfigApi.as_view(), name="client-config"),
    path("client/session", ClientSessionStatusApi.as_view(), name="client-session-status"),
    path("client/sessions", ClientSessionCreateApi.as_view(), name="client-sessions-create"),
    path("client/launch", ClientLaunchApi.as_view(), name="client-launch"),
    path("openapi.json", SpectacularJSONAPIView.as_view(**_public), name="openapi-schema"),
    path(
        "docs",
        _same_origin_assets(SpectacularSwaggerView.as_view(url_name="openapi-schema", **_public)),
        name="api-docs",
    ),
    path(
        "redoc",
        _same_origin_assets(
            SpectacularRedocView.as_view(url_name="openapi-schema", template_name="sessions_api/redoc.html", **_public)
        ),
        name="api-redoc",
    ),
    path("redoc-dist/bundles/redoc.standalone.js", redoc_bundle, name="api-redoc-bundle"),
]
