"""Routes of the partner API under /v1/."""
from django.urls import path
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from .collection import SessionCancelApi, SessionCollectionApi
from .sandbox import SandboxAdvanceApi
from .views import SessionDetailApi

_public = {"authentication_classes": [], "permission_classes": [AllowAny]}

urlpatterns = [
    path("sessions", SessionCollectionApi.as_view(), name="sessions-create"),
    path("sessions/<str:session_id>", SessionDetailApi.as_view(), name="sessions-detail"),
    path("sessions/<str:session_id>/cancel", SessionCancelApi.as_view(), name="sessions-cancel"),
    path("test/sessions/<str:session_id>/advance", SandboxAdvanceApi.as_view(), name="sandbox-advance"),
    path("openapi.json", SpectacularJSONAPIView.as_view(**_public), name="openapi-schema"),
    path("docs", SpectacularSwaggerView.as_view(url_name="openapi-schema", **_public), name="api-docs"),
    path("redoc", SpectacularRedocView.as_view(url_name="openapi-schema", template_name="sessions_api/redoc.html",
                                               **_public), name="api-redoc"),
]
