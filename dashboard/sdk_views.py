"""The dashboard's SDK keys page: publishable keys (generate, settings, revoke) and the snippets to embed the SDK."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from flow.sdk_files import SDK_VERSION, sdk_integrity
from sessions_api.models import Mode
from tenants.forms import PublishableKeySettingsForm
from tenants.models import PublishableKey
from tenants.services import publishable_key_generate, publishable_key_revoke, publishable_key_update
from webhooks.addresses import webhook_url_problem

from . import selectors
from .tenancy import current_tenant
from .views import actor_from


class CheckedSettingsForm(PublishableKeySettingsForm):
    def clean_client_notification_url(self):
        url = self.cleaned_data.get("client_notification_url", "").strip()
        # The rule of the partner API's notification_url (https, a public host, a real port), checked when the key
        # is saved: sending would refuse such an address too, but only later, with the session's webhook lost.
        problem = webhook_url_problem(url) if url else None
        if problem is not None:
            raise ValidationError(f"The notification URL {problem[1]}.")
        return url


class PublishableKeyGenerateForm(CheckedSettingsForm):
    mode = forms.ChoiceField(choices=Mode.choices, initial=Mode.TEST)

    class Meta(PublishableKeySettingsForm.Meta):
        fields = ("mode", *PublishableKeySettingsForm.Meta.fields)


def _keys(tenant):
    return PublishableKey.objects.filter(tenant=tenant)


def _page(request, site, *, form=None, status=200):
    tenant = current_tenant(request)
    request.dashboard_nav = "sdk"
    keys = list(_keys(tenant).filter(revoked_at__isnull=True))
    context = site.page_context(
        request,
        title="SDK keys",
        keys=keys,
        revoked_keys=list(_keys(tenant).filter(revoked_at__isnull=False).order_by("-revoked_at")[:5]),
        generate_form=form or PublishableKeyGenerateForm(initial={"mode": Mode.TEST}),
        example_key=keys[0] if keys else None,
        service_origin=f"{request.scheme}://{request.get_host()}",
        sdk_version=SDK_VERSION,
        sdk_integrity=sdk_integrity(),
        exposed_keys=list(selectors.api_keys_exposed(tenant=tenant)),
    )
    return TemplateResponse(request, "dashboard/sdk/keys.html", context, status=status)


@require_http_methods(["GET", "POST"])
def sdk_keys(request, site):
    if request.method == "GET":
        return _page(request, site)
    tenant = current_tenant(request)
    form = PublishableKeyGenerateForm(request.POST)
    if form.is_valid():
        settings = {name: form.cleaned_data[name] for name in PublishableKeySettingsForm.Meta.fields}
        try:
            key = publishable_key_generate(
                tenant=tenant, actor=actor_from(request), mode=form.cleaned_data["mode"], **settings
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, f"Publishable key {key.key} generated.")
            return redirect(reverse("dashboard:sdk_keys"))
    return _page(request, site, form=form, status=400)


def _key_or_404(request, key_id: int) -> PublishableKey:
    key = _keys(current_tenant(request)).filter(pk=key_id).first()
    if key is None:
        raise Http404("No such publishable key.")
    return key


@require_http_methods(["GET", "POST"])
def sdk_key_edit(request, site, key_id: int):
    key = _key_or_404(request, key_id)
    form = CheckedSettingsForm(request.POST or None, instance=key)
    if request.method == "POST" and key.is_active and form.is_valid():
        settings = {name: form.cleaned_data[name] for name in PublishableKeySettingsForm.Meta.fields}
        publishable_key_update(key=key, actor=actor_from(request), **settings)
        messages.success(request, f"Settings of {key.key} saved.")
        return redirect(reverse("dashboard:sdk_keys"))
    request.dashboard_nav = "sdk"
    return TemplateResponse(
        request,
        "dashboard/sdk/edit.html",
        site.page_context(request, title="Publishable key settings", key=key, form=form),
        status=400 if form.errors else 200,
    )


@require_http_methods(["GET", "POST"])
def sdk_key_revoke(request, site, key_id: int):
    key = _key_or_404(request, key_id)
    if request.method == "POST":
        publishable_key_revoke(key=key, actor=actor_from(request))
        messages.success(request, f"{key.key} is revoked: pages and apps using it stop working at once.")
        return redirect(reverse("dashboard:sdk_keys"))
    request.dashboard_nav = "sdk"
    return TemplateResponse(
        request,
        "dashboard/sdk/revoke_confirm.html",
        site.page_context(request, title="Revoke publishable key", key=key),
    )
