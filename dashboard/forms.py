"""Forms of the dashboard: sign-in for tenant staff, key generation, tenant switching and password reset."""

from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm

from core.client_address import client_address
from tenants.models import ApiKey, Membership

from . import sign_in_throttle


def user_has_membership(user) -> bool:
    return Membership.objects.filter(user=user).exists()


class ThrottledSignInMixin:
    """Counts failed sign-ins per username and per client address, and refuses past the limits."""

    throttled_message = "Too many failed sign-in attempts. Sign-in is paused for now: try again in %(wait)s."

    def clean(self):
        username = self.cleaned_data.get("username")
        if username is None or not self.cleaned_data.get("password"):
            return super().clean()  # no password is checked, so there is nothing to count
        address = client_address(self.request)
        if not sign_in_throttle.sign_in_admitted(username=username, address=address):
            # The same words whichever limit was reached, and whether or not the username exists.
            raise forms.ValidationError(
                self.throttled_message, code="throttled", params={"wait": sign_in_throttle.wait_text()}
            )
        try:
            cleaned_data = super().clean()
        except forms.ValidationError:
            if self.get_user() is None:
                sign_in_throttle.sign_in_failed(address=address)
            else:  # the password was right; the account is refused for another reason (no tenant)
                sign_in_throttle.sign_in_succeeded(username=username)
            raise
        sign_in_throttle.sign_in_succeeded(username=username)
        return cleaned_data


class OperatorAuthenticationForm(ThrottledSignInMixin, AdminAuthenticationForm):
    """The operators' /admin/ sign-in, throttled like the dashboard's."""


class DashboardAuthenticationForm(ThrottledSignInMixin, AuthenticationForm):
    """Admits an active user who belongs to at least one tenant; staff status is not needed (or enough)."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "no_tenant": "This account is not a member of any tenant. Ask your team's administrator to add you.",
    }

    def confirm_login_allowed(self, user):
        super().confirm_login_allowed(user)
        if not user_has_membership(user):
            raise forms.ValidationError(self.error_messages["no_tenant"], code="no_tenant")


class DashboardPasswordResetForm(PasswordResetForm):
    """Sends reset links only to tenant staff; the page answers the same either way, so it reveals no account."""

    def get_users(self, email):
        users = super().get_users(email)
        member_ids = set(
            get_user_model().objects.filter(tenant_memberships__isnull=False).values_list("pk", flat=True).distinct()
        )
        return (user for user in users if user.pk in member_ids)


class ApiKeyGenerateForm(forms.Form):
    mode = forms.ChoiceField(
        choices=[(ApiKey.Mode.LIVE, "Live"), (ApiKey.Mode.TEST, "Test (sandbox)")], initial=ApiKey.Mode.LIVE
    )
    label = forms.CharField(
        max_length=100,
        required=False,
        strip=True,
        widget=forms.TextInput(attrs={"placeholder": "e.g. production backend"}),
        help_text="Optional: a name to tell your keys apart.",
    )


class TenantSwitchForm(forms.Form):
    tenant = forms.CharField(max_length=30)
    next = forms.CharField(max_length=2048, required=False)
