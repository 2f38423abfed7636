"""The URL map: the partner API, the hosted flow, the dashboard, the operators' admin and health probes."""
from django.contrib import admin
from django.urls import include, path

from .health import healthz, readyz

urlpatterns = [
    path("v1/", include("sessions_api.urls")),
    path("flow/", include("flow.urls")),
    path("dashboard/", include("dashboard.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
]
