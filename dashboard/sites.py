"""The tenant dashboard: a second Django AdminSite, scoped to the signed-in user's current tenant.

Who is admitted: an active user with at least one tenants.Membership. Staff status is neither needed
nor enough: an operator without a membership uses /admin/, and tenant staff never see it.
"""

from functools import update_wrapper

from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.forms.forms import NON_FIELD_ERRORS
from django.urls import include, path, reverse_lazy

from . import age_pass_policy, branding, roles, sdk_views, team, views, webhook_addresses
from .forms import DashboardAuthenticationForm, DashboardPasswordResetForm
from .roles import ACCOUNT, INTEGRATION, MEMBERS
from .tenancy import tenancy_for

SITE_NAME = "dashboard"


class TenantDashboardSite(admin.AdminSite):
    site_header = "AgeVerify"
    site_title = "AgeVerify Dashboard"
    index_title = "Home"
    site_url = None  # no "View site" link: the dashboard is the site
    enable_nav_sidebar = True
    final_catch_all_view = False
    login_form = DashboardAuthenticationForm
    index_template = "dashboard/home.html"
    login_template = "dashboard/auth/login.html"
    logout_template = "dashboard/auth/logged_out.html"
    password_change_template = "dashboard/auth/password_change_form.html"
    password_change_done_template = "dashboard/auth/password_change_done.html"

    def admin_view(self, view, cacheable=False):
        # Every page resolves `admin:` URL names to this site, custom pages included.
        def in_this_site(request, *args, **kwargs):
            request.current_app = self.name
            return view(request, *args, **kwargs)

        return super().admin_view(update_wrapper(in_this_site, view), cacheable)

    @login_not_required
    def login(self, request, extra_context=None):
        response = super().login(request, extra_context)
        form = (getattr(response, "context_data", None) or {}).get("form")
        if form is not None and form.has_error(NON_FIELD_ERRORS, "throttled"):
            response.status_code = 429  # the login page itself, with the form's error, not a bare error page
        return response

    def has_permission(self, request):
        return request.user.is_active and tenancy_for(request).current is not None

    def each_context(self, request):
        context = super().each_context(request)
        tenancy = tenancy_for(request)
        context.update(
            tenancy=tenancy,
            tenant=tenancy.current,
            nav_section=getattr(request, "dashboard_nav", ""),
            role=tenancy.role,
            can=roles.abilities(request),
        )
        return context

    def get_app_list(self, request, app_label=None):
        return []  # the dashboard's navigation is its own (templates/dashboard/base_site.html)

    def get_log_entries(self, request):
        return LogEntry.objects.none()  # the operators' change log is not for tenant staff

    def index(self, request, extra_context=None):
        return views.home(request, self)

    def page_context(self, request, **context):
        return {**self.each_context(request), **context}

    def get_urls(self):
        def wrap(view, cacheable=False):
            def wrapper(*args, **kwargs):
                return self.admin_view(view, cacheable)(*args, **kwargs)

            wrapper.admin_site = self
            return update_wrapper(wrapper, view)

        def page(view, needs: str | None = None, reads_open: bool = False):
            """A page; `needs`: the role capability its actions (and, unless `reads_open`, its reads) need."""

            def checked(request, *args, **kwargs):
                reading = reads_open and request.method in ("GET", "HEAD")
                if needs and not reading and not roles.may(request, needs):
                    return roles.refused(request, self, needs)
                return view(request, self, *args, **kwargs)

            return wrap(update_wrapper(checked, view))

        registry = {model._meta.model_name: model_admin for model, model_admin in self._registry.items()}
        return [
            path("", wrap(self.index), name="index"),
            path("login/", self.login, name="login"),
            path("logout/", wrap(self.logout), name="logout"),
            path("password_change/", wrap(self.password_change, cacheable=True), name="password_change"),
            path("password_change/done/", wrap(self.password_change_done, cacheable=True), name="password_change_done"),
            *self._password_reset_urls(),
            path("tenant/switch/", page(views.tenant_switch_view), name="tenant_switch"),
            path("keys/generate/", page(views.key_generate, INTEGRATION), name="key_generate"),
            path("keys/<int:key_id>/revoke/", page(views.key_revoke, INTEGRATION), name="key_revoke"),
            path("sdk/", page(sdk_views.sdk_keys, INTEGRATION, reads_open=True), name="sdk_keys"),
            path("sdk/<int:key_id>/", page(sdk_views.sdk_key_edit, INTEGRATION), name="sdk_key_edit"),
            path("sdk/<int:key_id>/revoke/", page(sdk_views.sdk_key_revoke, INTEGRATION), name="sdk_key_revoke"),
            path("webhooks/", page(views.webhooks_page), name="webhooks"),
            path(
                "webhooks/secret/reveal/", page(views.webhook_secret_reveal, INTEGRATION), name="webhook_secret_reveal"
            ),
            path(
                "webhooks/secret/rotate/", page(views.webhook_secret_rotate, INTEGRATION), name="webhook_secret_rotate"
            ),
            path(
                "webhooks/deliveries/<str:delivery_id>/resend/",
                page(views.delivery_resend, INTEGRATION),
                name="delivery_resend",
            ),
            path(
                "webhooks/address/",
                page(webhook_addresses.webhook_address_save, INTEGRATION),
                name="webhook_address_save",
            ),
            path("webhooks/test/", page(webhook_addresses.webhook_test_send, INTEGRATION), name="webhook_test_send"),
            path(
                "webhooks/events/", page(webhook_addresses.webhook_events_save, INTEGRATION), name="webhook_events_save"
            ),
            path("branding/", page(branding.branding_page, ACCOUNT, reads_open=True), name="branding"),
            path(
                "age-passes/",
                page(age_pass_policy.age_pass_policy_page, ACCOUNT, reads_open=True),
                name="age_pass_policy",
            ),
            path("team/", page(team.team_page, MEMBERS, reads_open=True), name="team"),
            path("team/members/<int:membership_id>/role/", page(team.member_role, MEMBERS), name="member_role"),
            path("team/members/<int:membership_id>/remove/", page(team.member_remove, MEMBERS), name="member_remove"),
            path(
                "team/invitations/<int:invitation_id>/revoke/",
                page(team.invitation_revoke_view, MEMBERS),
                name="invitation_revoke",
            ),
            path("invitations/<str:token>/", team.invitation_accept_view, name="invitation_accept"),
            path("funnel/", page(views.funnel_page), name="funnel"),
            path("sessions/", include(registry["verificationsession"].urls)),
            path("audit-log/", include(registry["auditlogentry"].urls)),
        ]

    def _password_reset_urls(self):
        """Django's reset views, themed like the dashboard, sending a link that leads back to it."""
        context = {"site_header": self.site_header, "site_title": self.site_title, "has_permission": False}
        return [
            path(
                "password_reset/",
                views.PasswordResetRequestView.as_view(
                    form_class=DashboardPasswordResetForm,
                    template_name="dashboard/auth/password_reset_form.html",
                    email_template_name="dashboard/auth/password_reset_email.txt",
                    subject_template_name="dashboard/auth/password_reset_subject.txt",
                    success_url=reverse_lazy(f"{SITE_NAME}:password_reset_done"),
                    extra_context=context,
                ),
                name="password_reset",
            ),
            path(
                "password_reset/done/",
                auth_views.PasswordResetDoneView.as_view(
                    template_name="dashboard/auth/password_reset_done.html",
                    extra_context=context,
                ),
                name="password_reset_done",
            ),
            path(
                "reset/<uidb64>/<token>/",
                auth_views.PasswordResetConfirmView.as_view(
                    template_name="dashboard/auth/password_reset_confirm.html",
                    success_url=reverse_lazy(f"{SITE_NAME}:password_reset_complete"),
                    extra_context=context,
                ),
                name="password_reset_confirm",
            ),
            path(
                "reset/done/",
                auth_views.PasswordResetCompleteView.as_view(
                    template_name="dashboard/auth/password_reset_complete.html",
                    extra_context=context,
                ),
                name="password_reset_complete",
            ),
        ]


dashboard_site = TenantDashboardSite(name=SITE_NAME)
