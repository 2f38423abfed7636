"""Routes of the partner API under /v1/."""
from django.urls import path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from .client import ClientConfigApi, ClientLaunchApi, ClientSessionCreateApi, ClientSessionStatusApi
from .collection import SessionCancelApi, SessionCollectionApi
from .sandbox import SandboxAdvanceApi
from .views import SessionDetailApi

_public = {"authentication_classes": [], "permission_classes": [AllowAny]}

urlpatterns = [
    path("sessions", SessionCollectionApi.as_view(), name="sessions-create"),
    path("sessions/<str:session_id>", SessionDetailApi.as_view(), name="sessions-detail"),
    path("sessions/<str:session_id>/cancel", SessionCancelApi.as_view(), name="sessions-cancel"),
    path("test/sessions/<str:session_id>/advance", SandboxAdvanceApi.as_view(), name="sandbox-advance"),
    path("client/config", ClientConfigApi.as_view(), name="client-config"),
    path("client/session", ClientSessionStatusApi.as_view(), name="client-session-status"),
    path("client/sessions", ClientSessionCreateApi.as_view(), name="client-sessions-create"),
    path("client/launch", ClientLaunchApi.as_view(), name="client-launch"),
    path("openapi.json", SpectacularJSONAPIView.as_view(**_public), name="openapi-schema"),
    path("docs", SpectacularSwaggerView.as_view(url_name="openapi-schema", **_public), name="api-docs"),
    path("redoc", SpectacularRedocView.as_view(url_name="openapi-schema", template_name="sessions_api/redoc.html",
                                               **_public), name="api-redoc"),
]
