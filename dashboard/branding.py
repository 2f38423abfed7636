"""The dashboard's Branding page: how the hosted flow presents the tenant (tenants.branding checks every field)."""

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from tenants.branding import LOGO_MAX_BYTES, MIN_CONTRAST, tenant_branding_form_values, tenant_branding_update

from .tenancy import current_tenant
from .views import actor_from


class BrandingForm(forms.Form):
    display_name = forms.CharField(
        max_length=100,
        required=False,
        help_text=(
            "Shown to your users in the flow instead of your account's name. Leave empty to use the account's name."
        ),
    )
    accent_color = forms.CharField(
        max_length=7,
        required=False,
        widget=forms.TextInput(attrs={"placeholder": "#1d4ed8", "spellcheck": "false"}),
        help_text=f"#rrggbb. Paints the flow's buttons and links, so it needs a contrast of at least {MIN_CONTRAST}:1 "
        "with white (WCAG 2.2 AA). Leave empty for the flow's blue.",
    )
    privacy_notice_url = forms.CharField(
        label="Privacy notice URL",
        max_length=500,
        required=False,
        widget=forms.URLInput(attrs={"placeholder": "https://example.com/privacy"}),
        help_text="Linked on the flow's consent page. Must be an https:// address.",
    )
    logo = forms.FileField(
        required=False,
        widget=forms.ClearableFileInput(attrs={"accept": "image/png,image/jpeg,image/webp"}),
        help_text=f"PNG, JPEG or WebP, up to {LOGO_MAX_BYTES // 1024} KB (SVG is not accepted). "
        "Shown at the top of every flow page, at most 40 pixels high.",
    )
    remove_logo = forms.BooleanField(required=False, label="Remove the current logo")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():  # each input names its hint (the template's `<id>-hint`)
            field.widget.attrs["aria-describedby"] = f"id_{name}-hint"


def _page(request, site, form, branding, status=200):
    request.dashboard_nav = "branding"
    return TemplateResponse(
        request,
        "dashboard/branding.html",
        site.page_context(request, title="Branding", form=form, branding=branding),
        status=status,
    )


@require_http_methods(["GET", "POST"])
def branding_page(request, site):
    tenant = current_tenant(request)
    stored = tenant_branding_form_values(tenant)
    if request.method == "GET":
        form = BrandingForm(
            initial={
                "display_name": stored.display_name,
                "accent_color": stored.accent_color,
                "privacy_notice_url": stored.privacy_notice_url,
            }
        )
        return _page(request, site, form, stored)
    if request.POST.get("tenant") not in ("", None, tenant.id):
        messages.error(
            request,
            f"That form was for another tenant, but the dashboard now shows {tenant.name} "
            "(switched in another tab). Nothing was changed.",
        )
        return redirect("dashboard:branding")
    form = BrandingForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, site, form, stored, status=400)
    upload = form.cleaned_data["logo"]
    if upload and upload.size > LOGO_MAX_BYTES:  # refused before its bytes are read
        form.add_error(
            "logo", f"The logo is {upload.size // 1024} KB; at most {LOGO_MAX_BYTES // 1024} KB is accepted."
        )
        return _page(request, site, form, stored, status=400)
    try:
        tenant_branding_update(
            tenant=tenant,
            actor=actor_from(request),
            display_name=form.cleaned_data["display_name"],
            accent_color=form.cleaned_data["accent_color"],
            privacy_notice_url=form.cleaned_data["privacy_notice_url"],
            logo=upload.read() if upload else None,
            remove_logo=form.cleaned_data["remove_logo"],
        )
    except ValidationError as error:
        for field, field_messages in error.message_dict.items():
            for message in field_messages:
                form.add_error(field, message)
        return _page(request, site, form, stored, status=400)
    messages.success(request, "Branding saved. New verification pages show it from now on.")
    return redirect("dashboard:branding")
