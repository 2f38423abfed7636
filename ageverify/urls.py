"""The URL map: the partner API, the hosted flow, the dashboard, the operators' admin, health probes, pipeline,
and the documentation site."""

from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView, TemplateView

from dashboard.forms import OperatorAuthenticationForm
from flow.sdk_files import sdk_view
from pipeline.views import pipeline_status_view
from sessions_api.admin import age_policy_page

from .docs_site import docs_site
from .health import healthz, readyz

# The operators' admin; tenant staff have their own AdminSite at /dashboard/ (dashboard/sites.py).
admin.site.site_header = "AgeVerify operations"
admin.site.site_title = "AgeVerify operations"
admin.site.index_title = "Tenants, keys, sessions and webhooks"
admin.site.site_url = "/dashboard/"
admin.site.index_template = "admin/operators_index.html"  # the pipeline's health; links the age policy page
admin.site.login_form = OperatorAuthenticationForm  # failed sign-ins are throttled as on the dashboard

urlpatterns = [
    path("", TemplateView.as_view(template_name="front.html"), name="front"),
    # Asked for by browsers on every page that links no icon (the operators' admin, the API reference, errors).
    path("favicon.ico", RedirectView.as_view(url=static("dashboard/logo.svg"), permanent=True), name="favicon"),
    path("v1/", include("sessions_api.api.urls")),
    # The documentation site (MkDocs, built by setup), beside the API reference's /v1/docs and /v1/redoc.
    re_path(r"^docs/(?P<path>.*)$", docs_site, name="docs-site"),
    path("flow/", include("flow.urls")),
    # A phone's wallet answering the digital-ID step of a desktop (cross-device OpenID4VP).
    path("wallet/openid4vp/", include("wallets.urls")),
    path("sdk/v1/<str:name>", sdk_view, name="sdk-file"),
    path("dashboard/", include("dashboard.urls")),
    path("admin/age-policy/", admin.site.admin_view(age_policy_page), name="admin_age_policy"),
    # The audit log's model moved to tenants (issue 46): operators' bookmarks of its old admin pages still land.
    re_path(
        r"^admin/dashboard/auditlogentry/(?P<rest>.*)$",
        RedirectView.as_view(url="/admin/tenants/auditlogentry/%(rest)s", query_string=True, permanent=True),
    ),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("ops/pipeline", pipeline_status_view, name="pipeline-status"),
]
