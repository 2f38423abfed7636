"""The dashboard's Age passes page: the tenant's own pass policy (age_passes.services checks and saves it)."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.http import require_http_methods

from age_passes.models import AgePassPolicy, Method
from age_passes.selectors import age_pass_policy_of
from age_passes.services import POLICY_FIELDS, age_pass_policy_set

from .tenancy import current_tenant
from .views import _refuse_stale_form, _shown_for_another_tenant, actor_from


class AgePassPolicyForm(forms.ModelForm):
    """The model's fields, labels and hints: the operators' admin shows the same."""

    class Meta:
        model = AgePassPolicy
        fields = POLICY_FIELDS
        labels = {
            "offer_saving": "Offer to save a pass",
            "accept_passes": "Accept passes",
            "minimum_method": "Minimum method",
            "max_proof_age_days": "Oldest proof accepted (days)",
            "lifetime_days": "Lifetime of new passes (days)",
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["lifetime_days"].help_text += f" This deployment's: {settings.AGE_PASS_LIFETIME_DAYS} days."
        for name in ("max_proof_age_days", "lifetime_days"):  # the model's minimum, not its column's 0
            field = self.fields[name]
            field.min_value, field.validators, field.widget.attrs["min"] = 1, [MinValueValidator(1)], 1
        for name, field in self.fields.items():  # each input names its hint (the template's `<id>-hint`)
            field.widget.attrs["aria-describedby"] = f"id_{name}-hint"


def _page(request, site, form, status=200):
    request.dashboard_nav = "age_passes"
    saving = [Method(method).label for method in settings.AGE_PASS_METHODS]
    context = site.page_context(request, title="Age passes", form=form, saving_methods=saving)
    return TemplateResponse(request, "dashboard/age_passes.html", context, status=status)


@require_http_methods(["GET", "POST"])
def age_pass_policy_page(request, site):
    tenant = current_tenant(request)
    policy = age_pass_policy_of(tenant=tenant)
    if request.method == "GET":
        return _page(request, site, AgePassPolicyForm(instance=policy))
    if _shown_for_another_tenant(request):
        return _refuse_stale_form(request, "age_pass_policy")
    form = AgePassPolicyForm(request.POST, instance=age_pass_policy_of(tenant=tenant))
    if not form.is_valid():
        return _page(request, site, form, status=400)
    try:
        age_pass_policy_set(
            tenant=tenant, actor=actor_from(request), **{name: form.cleaned_data[name] for name in POLICY_FIELDS}
        )
    except ValidationError as error:
        for field, field_messages in error.message_dict.items():
            for message in field_messages:
                form.add_error(field if field in POLICY_FIELDS else None, message)
        return _page(request, site, form, status=400)
    messages.success(request, "Age pass policy saved. Sessions opened from now on follow it.")
    return redirect("dashboard:age_pass_policy")
