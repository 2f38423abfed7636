"""The dashboard's own pages (home, keys, webhooks, tenant switch, reset request); lists and details: admin.py."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from core.client_address import client_address
from sessions_api.events import OPTIONAL_EVENTS
from sessions_api.models import Mode
from tenants.audit import Actor
from tenants.models import WebhookSecretFields
from tenants.selectors import webhook_signing_secrets
from tenants.services import (
    api_key_generate,
    api_key_revoke,
    tenant_webhook_secret_reveal,
    tenant_webhook_secret_rotate,
)
from webhooks.selectors import delivery_get
from webhooks.services import delivery_resend as webhook_delivery_resend

from . import selectors, services, sign_in_throttle
from .charts import funnel_chart, usage_chart
from .forms import ApiKeyGenerateForm, TenantSwitchForm
from .funnel import DEFAULT_PERIOD, METHOD_LABELS, PERIODS, funnel_for
from .tenancy import current_tenant, tenancy_for, tenant_switch


def actor_from(request) -> Actor:
    """The signed-in member, with the address the request came from: who the audit log names."""
    return Actor(user=request.user, ip_address=request.META.get("REMOTE_ADDR") or None)


def _url(name: str) -> str:
    return reverse(f"dashboard:{name}")


def _safe_next(request, fallback: str) -> str:
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return fallback


def _shown_for_another_tenant(request) -> bool:
    """Whether a form was shown for another tenant than the current one, i.e. the user switched in another tab.

    Forms that act on the tenant as a whole (no object id that would 404) carry the tenant they were shown for.
    """
    shown = request.POST.get("tenant")
    return bool(shown) and shown != current_tenant(request).id


def _refuse_stale_form(request, url_name: str):
    messages.error(
        request,
        f"That page was for another tenant, but the dashboard now shows "
        f"{current_tenant(request).name} (switched in another tab). Nothing was changed.",
    )
    return redirect(_url(url_name))


# --- Home: Tenant ID, API keys, usage ---


def _home_context(request, site, *, form=None, **extra):
    tenant = current_tenant(request)
    usage_mode = Mode.TEST if request.GET.get("usage") == Mode.TEST else Mode.LIVE
    usage = selectors.usage_by_day(tenant=tenant, mode=usage_mode)
    request.dashboard_nav = "home"
    return site.page_context(
        request,
        title="Home",
        keys=list(selectors.api_keys_active(tenant=tenant)),
        exposed_keys=list(selectors.api_keys_exposed(tenant=tenant)),
        revoked_keys=list(selectors.api_keys_recently_revoked(tenant=tenant)),
        generate_form=form or ApiKeyGenerateForm(),
        usage=usage,
        usage_methods=[(reason, METHOD_LABELS[reason], count) for reason, count in usage.approved_by_method.items()],
        chart=usage_chart(usage),
        **extra,
    )


@require_GET
def home(request, site):
    return TemplateResponse(request, site.index_template, _home_context(request, site))


@require_POST
def key_generate(request, site):
    if _shown_for_another_tenant(request):
        return _refuse_stale_form(request, "index")
    tenant = current_tenant(request)
    form = ApiKeyGenerateForm(request.POST)
    if form.is_valid():
        try:
            generated = api_key_generate(
                tenant=tenant,
                actor=actor_from(request),
                mode=form.cleaned_data["mode"],
                label=form.cleaned_data["label"],
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            context = site.page_context(request, title="Your new API key", generated=generated)
            request.dashboard_nav = "home"
            return TemplateResponse(request, "dashboard/keys/created.html", context)
    return TemplateResponse(request, site.index_template, _home_context(request, site, form=form), status=400)


@require_http_methods(["GET", "POST"])
def key_revoke(request, site, key_id: int):
    tenant = current_tenant(request)
    api_key = selectors.api_key_for_tenant(tenant=tenant, key_id=key_id)
    if api_key is None:
        raise Http404("No such API key.")
    if not api_key.is_active:
        messages.info(request, f"{api_key.display_prefix} was already revoked.")
        return redirect(_url("index"))
    if request.method == "POST":
        api_key_revoke(api_key=api_key, actor=actor_from(request))
        messages.success(request, f"{api_key.display_prefix} is revoked: requests with it now fail with 401.")
        return redirect(_url("index"))
    request.dashboard_nav = "home"
    return TemplateResponse(
        request,
        "dashboard/keys/revoke_confirm.html",
        site.page_context(request, title="Revoke API key", api_key=api_key),
    )


# --- Funnel: where users stop, per period and mode ---


@require_GET
def funnel_page(request, site):
    mode = Mode.TEST if request.GET.get("mode") == Mode.TEST else Mode.LIVE
    try:
        days = int(request.GET.get("period", DEFAULT_PERIOD))
    except ValueError:
        days = DEFAULT_PERIOD
    if days not in PERIODS:
        days = DEFAULT_PERIOD
    funnel = funnel_for(tenant=current_tenant(request), mode=mode, days=days)
    request.dashboard_nav = "funnel"
    context = site.page_context(
        request,
        title="Funnel",
        funnel=funnel,
        chart=funnel_chart(funnel),
        periods=PERIODS,
        methods=[(METHOD_LABELS[reason], count) for reason, count in funnel.approved_by_method.items()],
    )
    return TemplateResponse(request, "dashboard/funnel.html", context)


# --- Webhooks: secret, status, egress addresses, recent deliveries ---

SECRET_MODES = {Mode.LIVE: "Live events", Mode.TEST: "Test (sandbox) events"}


def _secret_mode(data) -> str:
    """The mode a secret form acts on: `live` unless it says `test` (anything else is the live one, as before)."""
    return Mode.TEST if data.get("mode") == Mode.TEST else Mode.LIVE


def _webhooks_context(request, site, *, revealed_mode: str | None = None, revealed_secret: str = "", **extra):
    tenant = current_tenant(request)
    request.dashboard_nav = "webhooks"
    secrets = [
        {
            "mode": mode,
            "label": label,
            "revealed": revealed_secret if mode == revealed_mode else "",
            "overlap_active": len(webhook_signing_secrets(tenant, mode)) > 1,
            "previous_expires_at": getattr(tenant, WebhookSecretFields.of(mode).previous_expires_at),
        }
        for mode, label in SECRET_MODES.items()
    ]
    return site.page_context(
        request,
        title="Webhooks",
        egress_ips=settings.WEBHOOK_EGRESS_IPS,
        signing_secrets=secrets,
        deliveries=selectors.deliveries_recent(tenant=tenant),
        webhook_addresses=[
            {
                "mode": mode,
                "label": label,
                "url": selectors.webhook_address(tenant=tenant, mode=mode),
                "events": [
                    {"name": name, "description": description, "on": name in tenant.webhook_extra_events.get(mode, [])}
                    for name, description in OPTIONAL_EVENTS.items()
                ],
            }
            for mode, label in SECRET_MODES.items()
        ],
        test_events=services.TEST_EVENTS,
        **extra,
    )


@require_GET
def webhooks_page(request, site):
    return TemplateResponse(request, "dashboard/webhooks.html", _webhooks_context(request, site))


@require_POST
def webhook_secret_reveal(request, site):
    if _shown_for_another_tenant(request):
        return _refuse_stale_form(request, "webhooks")
    mode = _secret_mode(request.POST)
    secret = tenant_webhook_secret_reveal(tenant=current_tenant(request), actor=actor_from(request), mode=mode)
    context = _webhooks_context(request, site, revealed_mode=mode, revealed_secret=secret)
    return TemplateResponse(request, "dashboard/webhooks.html", context)


@require_http_methods(["GET", "POST"])
def webhook_secret_rotate(request, site):
    if request.method == "GET":
        request.dashboard_nav = "webhooks"
        mode = _secret_mode(request.GET)
        return TemplateResponse(
            request,
            "dashboard/webhook_rotate_confirm.html",
            site.page_context(request, title="Rotate signing secret", mode=mode, mode_label=SECRET_MODES[mode]),
        )
    if _shown_for_another_tenant(request):
        return _refuse_stale_form(request, "webhooks")
    mode = _secret_mode(request.POST)
    fields = WebhookSecretFields.of(mode)
    tenant = tenant_webhook_secret_rotate(tenant=current_tenant(request), actor=actor_from(request), mode=mode)
    tenancy_for(request).current = tenant  # the rotated secrets, for this page and its header
    overlap_until = getattr(tenant, fields.previous_expires_at)
    which = SECRET_MODES[mode].lower()
    if overlap_until is None:  # there was no secret before this one: nothing to overlap with
        messages.success(
            request, f"New signing secret created. Every webhook for {which} is signed with it from now on."
        )
    else:
        messages.success(
            request,
            f"New signing secret created. Until {overlap_until:%Y-%m-%d %H:%M} UTC "
            f"every webhook for {which} carries signatures with both the new and the previous secret.",
        )
    context = _webhooks_context(request, site, revealed_mode=mode, revealed_secret=getattr(tenant, fields.current))
    return TemplateResponse(request, "dashboard/webhooks.html", context)


@require_POST
def delivery_resend(request, site, delivery_id: str):
    tenant = current_tenant(request)
    delivery = delivery_get(tenant=tenant, delivery_id=delivery_id)
    if delivery is None:
        raise Http404("No such webhook delivery.")
    if not tenant.webhooks_enabled:
        # The sender would not send it anyway (webhooks.delivery); say so instead of a "queued" that never comes.
        messages.error(
            request,
            "Webhook sending is not enabled for your account, so nothing was re-sent. "
            "Ask AgeVerify support to switch it on.",
        )
        return HttpResponseRedirect(_safe_next(request, _url("webhooks")))
    webhook_delivery_resend(delivery=delivery, actor=actor_from(request))
    messages.success(request, f"Webhook {delivery.pk} is queued to be sent again.")
    return HttpResponseRedirect(_safe_next(request, _url("webhooks")))


# --- Tenant switcher ---


@require_POST
def tenant_switch_view(request, site):
    form = TenantSwitchForm(request.POST)
    if not form.is_valid() or tenant_switch(request, form.cleaned_data["tenant"]) is None:
        raise Http404("No such tenant.")
    tenant = current_tenant(request)
    messages.success(request, f"Now showing {tenant.name}.")
    # Back to the same kind of page, never to an object of the previous tenant (it would be a 404 now).
    return redirect(_safe_next(request, _url("index")))


# --- Password reset request, limited per client address: each request can send a mail ---


class PasswordResetRequestView(auth_views.PasswordResetView):
    def form_valid(self, form):
        # The link's host comes from settings, never from the request's Host header, which the requester
        # chooses: a forged one would mail the account's owner a link to the requester's server.
        self.extra_email_context = {"public_base_url": settings.PUBLIC_BASE_URL}
        address = client_address(self.request)
        if sign_in_throttle.password_reset_admitted(address=address):
            return super().form_valid(form)
        form.add_error(
            None,
            ValidationError(
                "Too many password reset requests from your network. Try again in %(wait)s.",
                code="throttled",
                params={"wait": sign_in_throttle.wait_text()},
            ),
        )
        response = self.form_invalid(form)
        response.status_code = 429
        return response
