"""Admin registrations: the tenant-scoped session list and audit log on the dashboard, the audit log for operators."""

from datetime import datetime

from django.contrib import admin, messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ERROR_FLAG, PAGE_VAR
from django.db.models import Exists, OuterRef
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from age_passes.models import Method as PassMethod
from sessions_api.models import Mode, Reason, SessionEvent, Status, VerificationSession
from sessions_api.retention import session_redact
from sessions_api.selectors import SessionNotFound, session_get
from sessions_api.state_machine import CANCELLED_THROUGH_API
from tenants.admin_lookups import SecretColumnsNotFilterable
from tenants.models import AuditLogEntry

from . import roles
from .exports import ROWS_PER_QUERY, sessions_csv
from .filters import CreatedRangeFilter, ModeFilter, StatusFilter
from .selectors import DOCUMENT_KINDS, deliveries_for_session, session_attempts
from .sites import dashboard_site
from .templatetags.dashboard_tags import utc
from .tenancy import current_tenant
from .views import actor_from


class ReadOnlyAdmin(SecretColumnsNotFilterable):
    """Rows are written by services only; no admin page may add, change or delete them."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class TenantScopedAdmin(ReadOnlyAdmin):
    """Read-only, and only the current tenant's rows: another tenant's object is a 404, as if it did not exist.

    Only the list (and, where a subclass adds it, a detail page) is routed: no add, change, delete or history.
    """

    list_per_page = 25
    show_full_result_count = False
    actions = None
    nav_section = ""

    def get_queryset(self, request):
        return super().get_queryset(request).filter(tenant=current_tenant(request))

    def has_module_permission(self, request):
        return self.admin_site.has_permission(request)

    def has_view_permission(self, request, obj=None):
        return self.admin_site.has_permission(request) and (obj is None or obj.tenant_id == current_tenant(request).id)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [path("", self.admin_site.admin_view(self.changelist_view), name="{}_{}_changelist".format(*info))]

    def changelist_view(self, request, extra_context=None):
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET"])
        request.dashboard_nav = self.nav_section
        if ERROR_FLAG in request.GET:
            # Django's admin sends unusable filters here; answer with a page that says so, not its setup error.
            context = self.admin_site.page_context(
                request, title="These filters cannot be applied", list_url=request.path
            )
            return TemplateResponse(request, "dashboard/filters_invalid.html", context, status=400)
        return super().changelist_view(request, {**self.list_context(request), **(extra_context or {})})

    def list_context(self, request) -> dict:
        return {}


CANCELLED_THROUGH_API_LABEL = "Cancelled by you through the API"
PASS_METHODS = dict(PassMethod.choices)


def status_badge(status: str, label: str) -> str:
    return format_html('<span class="av-badge av-badge--{}">{}</span>', status, label)


@admin.register(VerificationSession, site=dashboard_site)
class SessionDashboardAdmin(TenantScopedAdmin):
    change_list_template = "dashboard/sessions/list.html"
    nav_section = "sessions"
    list_display = (
        "session_link",
        "subject",
        "status_display",
        "reason_display",
        "mode_display",
        "age_limit",
        "created_display",
    )
    list_display_links = None
    list_filter = (StatusFilter, ModeFilter, CreatedRangeFilter)
    search_fields = ("subject", "=id")
    search_help_text = "Search by subject (partial match) or session ID (exact)."
    ordering = ("-created_at",)
    sortable_by = ("created_display", "subject", "age_limit", "status_display", "mode_display")

    def list_context(self, request):
        # The export takes the list's search, filters and order, not its page.
        query = request.GET.copy()
        query.pop(PAGE_VAR, None)
        return {
            "title": "Sessions",
            "status_choices": Status.choices,
            "mode_choices": Mode.choices,
            "export_query": query.urlencode(),
        }

    def get_queryset(self, request):
        # The partner's cancellation is not the user's: the reason's label says who, from the history.
        through_api = SessionEvent.objects.filter(
            session=OuterRef("pk"), reason=Reason.CANCELLED, cause=CANCELLED_THROUGH_API
        )
        return super().get_queryset(request).annotate(cancelled_through_api=Exists(through_api))

    @admin.display(description="Session")
    def session_link(self, session):
        from django.urls import reverse

        url = reverse("dashboard:sessions_api_verificationsession_change", args=[session.pk])
        return format_html('<a class="av-mono" href="{}">{}</a>', url, session.pk)

    @admin.display(description="Status", ordering="status")
    def status_display(self, session):
        return status_badge(session.status, session.get_status_display())

    @admin.display(description="Reason")
    def reason_display(self, session):
        if not session.reason:
            return "—"
        if getattr(session, "cancelled_through_api", False):
            return CANCELLED_THROUGH_API_LABEL
        # The badge already says "Approved": "Approved by age estimation" reads as "Age estimation" here.
        return session.get_reason_display().removeprefix("Approved by ").capitalize()

    @admin.display(description="Mode", ordering="mode")
    def mode_display(self, session):
        return format_html(
            '<span class="av-badge av-badge--mode-{}">{}</span>',
            session.mode,
            "Live" if session.mode == "live" else "Test",
        )

    @admin.display(description="Created", ordering="created_at")
    def created_display(self, session):
        return utc(session.created_at)

    def get_urls(self):
        info = self.opts.app_label, self.opts.model_name
        return [
            *super().get_urls(),
            path("export.csv", self.admin_site.admin_view(self.export_view), name="session_export"),
            path("<str:object_id>/", self.admin_site.admin_view(self.detail_view), name="{}_{}_change".format(*info)),
            path("<str:object_id>/redact/", self.admin_site.admin_view(self.redact_view), name="session_redact"),
        ]

    def export_view(self, request):
        """The list's sessions, with the same search and filters, as CSV; a filter that cannot apply is a 400."""
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET"])
        try:
            changelist = None if ERROR_FLAG in request.GET else self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            changelist = None
        errors = [spec.error for spec in changelist.filter_specs if spec.error] if changelist else []
        if changelist is None or errors:
            # The list would show every session with a warning; an export must never hold more than was asked.
            context = self.admin_site.page_context(
                request,
                title="These filters cannot be applied",
                list_url=reverse("dashboard:sessions_api_verificationsession_changelist"),
                errors=errors,
            )
            return TemplateResponse(request, "dashboard/filters_invalid.html", context, status=400)
        sessions = changelist.queryset.iterator(chunk_size=ROWS_PER_QUERY)
        response = StreamingHttpResponse(sessions_csv(sessions), content_type="text/csv; charset=utf-8")
        name = f"sessions-{timezone.now():%Y%m%d-%H%M%S}.csv"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        response["Cache-Control"] = "no-store"
        return response

    def redact_view(self, request, object_id):
        """POST only, with the confirmation box ticked: the API's redaction, audited with the signed-in user."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not roles.may(request, roles.ACCOUNT):
            return roles.refused(request, self.admin_site, roles.ACCOUNT)
        try:
            session = session_get(session_id=object_id, tenant=current_tenant(request))
        except SessionNotFound:
            raise Http404("No such session.") from None
        detail = reverse("dashboard:sessions_api_verificationsession_change", args=[session.pk])
        if not session.is_final:
            messages.error(request, "Only a final session (approved or denied) can be redacted.")
        elif request.POST.get("confirm") != "erase":
            messages.error(request, "Nothing was erased: tick the box to confirm the redaction.")
        else:
            actor = actor_from(request)
            session_redact(session_id=session.pk, actor=actor, cause=f"redacted in the dashboard by {actor.label}")
            messages.success(request, "The session's subject, metadata and results were erased.")
        return HttpResponseRedirect(detail)

    def detail_view(self, request, object_id):
        if request.method != "GET":
            return HttpResponseNotAllowed(["GET"])
        try:
            # The API's own read: an open session past its expiry is shown (and recorded) as expired.
            session = session_get(session_id=object_id, tenant=current_tenant(request))
        except SessionNotFound:
            raise Http404("No such session.") from None
        request.dashboard_nav = self.nav_section
        events = list(SessionEvent.objects.filter(session=session))
        age_pass = getattr(session, "age_pass", None)
        document = getattr(session, "document", None)
        context = self.admin_site.page_context(
            request,
            title=f"Session {session.pk}",
            session=session,
            status_badge=status_badge(session.status, session.get_status_display()),
            results={
                "age_estimation": getattr(session, "age_estimation", None),
                "liveness": getattr(session, "liveness", None),
                "document": document,
                "age_credential": getattr(session, "age_credential", None),
                "age_pass": age_pass,
            },
            document_kind=DOCUMENT_KINDS.get(document.document_kind, document.document_kind) if document else "",
            age_pass_method=PASS_METHODS.get(age_pass.method, age_pass.method) if age_pass else "",
            events=events,
            attempts=session_attempts(events, session=session),
            cancelled_through_api=CANCELLED_THROUGH_API,
            cancelled_through_api_label=CANCELLED_THROUGH_API_LABEL,
            reason_label=CANCELLED_THROUGH_API_LABEL
            if any(event.cause == CANCELLED_THROUGH_API for event in events)
            else session.get_reason_display(),
            deliveries=deliveries_for_session(session=session),
            opts=self.opts,
        )
        return TemplateResponse(request, "dashboard/sessions/detail.html", context)


class ActionFilter(admin.SimpleListFilter):
    title = "action"
    parameter_name = "action"

    def lookups(self, request, model_admin):
        return AuditLogEntry.Action.choices

    def queryset(self, request, queryset):
        value = self.value()
        return queryset.filter(action=value) if value in AuditLogEntry.Action.values else queryset


@admin.register(AuditLogEntry, site=dashboard_site)
class AuditLogDashboardAdmin(TenantScopedAdmin):
    change_list_template = "dashboard/audit_log.html"
    nav_section = "audit"
    list_display = ("when", "who", "action_display", "target", "details", "ip")
    list_display_links = None
    list_filter = (ActionFilter,)
    search_fields = ("actor_label", "target_label", "target_id")
    search_help_text = "Search by person, key prefix or webhook ID."
    list_per_page = 50
    sortable_by = ()

    def list_context(self, request):
        return {"title": "Audit log", "action_choices": AuditLogEntry.Action.choices}

    @admin.display(description="Action")
    def action_display(self, entry):
        return format_html('<span class="av-badge av-badge--action">{}</span>', entry.get_action_display())

    @admin.display(description="When")
    def when(self, entry):
        return utc(entry.created_at)

    @admin.display(description="Who")
    def who(self, entry):
        return entry.actor_label

    @admin.display(description="Target")
    def target(self, entry):
        return format_html('<span class="av-mono">{}</span>', entry.target_label) if entry.target_label else "—"

    @admin.display(description="IP address")
    def ip(self, entry):
        return entry.ip_address or "—"

    @admin.display(description="Details")
    def details(self, entry):
        return audit_details(entry.extra)


_DETAIL_LABELS = {
    "mode": "Mode",
    "label": "Label",
    "previous": "Previous secret",
    "previous_signs_until": "Previous signs until",
    "original": "Message",
    "url": "URL",
    "previous_address": "Previous address",
    "role": "Role",
    "previous_role": "Previous role",
    "invited_as": "Invited as",
    "valid_until": "Link valid until",
}


def audit_details(extra: dict) -> str:
    """An entry's extra data as short `Label: value` phrases, timestamps in the dashboard's UTC form."""
    pairs = []
    for key, value in extra.items():
        if value in ("", None):
            continue
        if key.endswith("_until"):
            try:
                value = utc(datetime.fromisoformat(value))
            except (TypeError, ValueError):
                pass
        pairs.append((_DETAIL_LABELS.get(key, key), value))
    return format_html_join(" · ", '<span class="av-detail">{}: {}</span>', pairs) or "—"


@admin.register(AuditLogEntry)
class AuditLogEntryAdmin(ReadOnlyAdmin):
    """Operators read every tenant's audit log; nobody edits it."""

    list_display = ("created_at", "tenant", "actor_label", "action", "target_type", "target_label", "ip_address")
    list_filter = ("action", "target_type", ("created_at", admin.DateFieldListFilter))
    search_fields = ("tenant__name", "tenant__id", "actor_label", "target_id", "target_label")
    date_hierarchy = "created_at"
    list_select_related = ("tenant",)
