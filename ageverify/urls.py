"""The URL map: the partner API, the hosted flow, the dashboard, the operators' admin, health probes and pipeline status."""
from django.contrib import admin
from django.urls import include, path

from dashboard.forms import OperatorAuthenticationForm
from pipeline.views import pipeline_status_view

from .health import healthz, readyz

# The operators' admin; tenant staff have their own AdminSite at /dashboard/ (dashboard/sites.py).
admin.site.site_header = "AgeVerify operations"
admin.site.site_title = "AgeVerify operations"
admin.site.index_title = "Tenants, keys, sessions and webhooks"
admin.site.site_url = "/dashboard/"
admin.site.login_form = OperatorAuthenticationForm  # failed sign-ins are throttled as on the dashboard
admin.site.index_template = "admin/operations_index.html"  # the pipeline's health above the app list

urlpatterns = [
    path("v1/", include("sessions_api.urls")),
    path("flow/", include("flow.urls")),
    path("dashboard/", include("dashboard.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("ops/pipeline", pipeline_status_view, name="pipeline-status"),
]
