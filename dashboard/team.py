"""The Team page (members, roles, invitations) and the page an invitation's link opens.

Who may do what is dashboard.roles: the routes check the capability, these views check the member a
change is about (only an owner touches an owner). The last-owner rule is tenants.members'.
"""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login, password_validation
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.http import Http404
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from core.client_address import client_address
from core.rate_limit import bucket_take
from tenants.audit import Actor
from tenants.members import (
    InvitationInvalid,
    invitation_accept,
    invitation_create,
    invitation_for_token,
    invitation_revoke,
    member_users_with_email,
    membership_remove,
    membership_role_change,
)
from tenants.models import Invitation, Membership, Role

from . import roles, sign_in_throttle
from .tenancy import SESSION_KEY, current_tenant
from .views import _refuse_stale_form, _shown_for_another_tenant, actor_from

# Each invitation sends an email: a few at once, then one a minute per tenant.
INVITE_BURST = 10
INVITE_RATE_PER_SECOND = 1 / 60


class InviteForm(forms.Form):
    email = forms.EmailField(max_length=254)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)

    def __init__(self, *args, assignable, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["role"].choices = assignable


def _members(tenant):
    return Membership.objects.filter(tenant=tenant).select_related("user").order_by("user__username")


def _page(request, site, *, form=None, status=200):
    tenant = current_tenant(request)
    request.dashboard_nav = "team"
    assignable = roles.assignable_roles(request)
    members = [
        {
            "membership": membership,
            "label": Actor(user=membership.user).label,
            "manageable": roles.may_manage_member(request, membership.role),
            "is_you": membership.user_id == request.user.pk,
        }
        for membership in _members(tenant)
    ]
    pending = Invitation.objects.filter(
        tenant=tenant, accepted_at=None, revoked_at=None, expires_at__gt=timezone.now()
    ).select_related("invited_by")
    context = site.page_context(
        request,
        title="Team",
        members=members,
        invitations=[
            {"invitation": invitation, "manageable": roles.may_manage_member(request, invitation.role)}
            for invitation in pending
        ],
        invite_form=form or InviteForm(assignable=assignable),
        assignable_roles=assignable,
        role_descriptions=ROLE_DESCRIPTIONS,
    )
    return TemplateResponse(request, "dashboard/team.html", context, status=status)


ROLE_DESCRIPTIONS = [
    (Role.OWNER.label, "Everything, including managing other owners. A tenant always keeps at least one."),
    (Role.ADMIN.label, "Everything but owners: the team, branding, redaction, keys and webhooks."),
    (Role.DEVELOPER.label, "API keys, SDK keys and webhooks, with their secrets. Not the team."),
    (Role.VIEWER.label, "Reads sessions, deliveries and the audit log. Never sees a secret, changes nothing."),
]


def _send_invitation(request, issued) -> None:
    invitation = issued.invitation
    # The link's host comes from settings, never from the request's Host header (as for password resets).
    link = settings.PUBLIC_BASE_URL.rstrip("/") + reverse("dashboard:invitation_accept", args=[issued.token])
    context = {
        "tenant": invitation.tenant,
        "role": invitation.get_role_display(),
        "inviter": Actor(user=request.user).label,
        "link": link,
        "expires_at": invitation.expires_at,
    }
    send_mail(
        subject=f"You are invited to {invitation.tenant.name} on AgeVerify",
        message=render_to_string("dashboard/team/invitation_email.txt", context),
        from_email=None,
        recipient_list=[invitation.email],
    )


@require_http_methods(["GET", "POST"])
def team_page(request, site):
    if request.method == "GET":
        return _page(request, site)
    if _shown_for_another_tenant(request):
        return _refuse_stale_form(request, "team")
    tenant = current_tenant(request)
    form = InviteForm(request.POST, assignable=roles.assignable_roles(request))
    if not form.is_valid():
        return _page(request, site, form=form, status=400)
    throttled = bucket_take(f"invite:{tenant.pk}", rate=INVITE_RATE_PER_SECOND, burst=INVITE_BURST)
    if throttled is not None and not throttled.allowed:
        form.add_error(None, f"Too many invitations: try again in {throttled.retry_after} s.")
        return _page(request, site, form=form, status=429)
    try:
        issued = invitation_create(
            tenant=tenant, actor=actor_from(request), email=form.cleaned_data["email"], role=form.cleaned_data["role"]
        )
    except ValidationError as error:
        for field, field_messages in error.message_dict.items():
            for message in field_messages:
                form.add_error(field if field in form.fields else None, message)
        return _page(request, site, form=form, status=400)
    _send_invitation(request, issued)
    invitation = issued.invitation
    messages.success(
        request,
        f"Invitation sent to {invitation.email} as {invitation.get_role_display().lower()}. "
        f"The link works once, until {invitation.expires_at:%Y-%m-%d %H:%M} UTC.",
    )
    return redirect("dashboard:team")


def _membership_or_404(request, membership_id: int) -> Membership:
    membership = _members(current_tenant(request)).filter(pk=membership_id).first()
    if membership is None:
        raise Http404("No such member.")
    return membership


def _refuse_owner_change(request, site, membership_role: str, new_role: str | None = None):
    if roles.may_manage_member(request, membership_role) and (
        new_role is None or roles.may_manage_member(request, new_role)
    ):
        return None
    return roles.refused(request, site, roles.OWNERS)


@require_POST
def member_role(request, site, membership_id: int):
    membership = _membership_or_404(request, membership_id)
    role = request.POST.get("role", "")
    if role not in Role.values:
        messages.error(request, "Choose one of the roles: owner, admin, developer or viewer.")
        return redirect("dashboard:team")
    refused = _refuse_owner_change(request, site, membership.role, role)
    if refused is not None:
        return refused
    try:
        membership_role_change(membership=membership, role=role, actor=actor_from(request))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, f"{membership.user.get_username()} is now {Role(role).label.lower()}.")
    return redirect("dashboard:team")


@require_http_methods(["GET", "POST"])
def member_remove(request, site, membership_id: int):
    membership = _membership_or_404(request, membership_id)
    refused = _refuse_owner_change(request, site, membership.role)
    if refused is not None:
        return refused
    if request.method == "GET":
        request.dashboard_nav = "team"
        return TemplateResponse(
            request,
            "dashboard/team/remove_confirm.html",
            site.page_context(
                request, title="Remove member", membership=membership, label=Actor(user=membership.user).label
            ),
        )
    try:
        membership_remove(membership=membership, actor=actor_from(request))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("dashboard:team")
    messages.success(request, f"{membership.user.get_username()} no longer has access to {membership.tenant.name}.")
    if membership.user_id == request.user.pk:
        return redirect("dashboard:index")  # the next tenant, or the sign-in page if none is left
    return redirect("dashboard:team")


@require_POST
def invitation_revoke_view(request, site, invitation_id: int):
    invitation = Invitation.objects.filter(tenant=current_tenant(request), pk=invitation_id).first()
    if invitation is None:
        raise Http404("No such invitation.")
    refused = _refuse_owner_change(request, site, invitation.role)
    if refused is not None:
        return refused
    if invitation_revoke(invitation=invitation, actor=actor_from(request)):
        messages.success(request, f"The invitation to {invitation.email} no longer works.")
    else:
        messages.info(request, f"The invitation to {invitation.email} was no longer pending.")
    return redirect("dashboard:team")


# --- The invitation's link: set a password (new account) or confirm an existing account's password ---


class NewAccountForm(forms.Form):
    password1 = forms.CharField(
        label="Choose a password", widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    password2 = forms.CharField(
        label="The same password again", widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def __init__(self, *args, email: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.email = email

    def clean(self):
        cleaned = super().clean()
        first, second = cleaned.get("password1"), cleaned.get("password2")
        if first and second and first != second:
            raise ValidationError("The two passwords differ.")
        if first:
            password_validation.validate_password(first, get_user_model()(username=self.email, email=self.email))
        return cleaned


class ExistingAccountForm(forms.Form):
    password = forms.CharField(
        label="Your password", widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )

    def __init__(self, *args, request, candidates, **kwargs):
        super().__init__(*args, **kwargs)
        self.request, self.candidates, self.user = request, candidates, None

    def clean(self):
        password = self.cleaned_data.get("password")
        if not password:
            return self.cleaned_data
        address = client_address(self.request)
        username = self.candidates[0].get_username()
        if not sign_in_throttle.sign_in_admitted(username=username, address=address):
            raise ValidationError(
                "Too many failed attempts. Try again in %(wait)s.", params={"wait": sign_in_throttle.wait_text()}
            )
        self.user = next((user for user in self.candidates if user.check_password(password)), None)
        if self.user is None:
            sign_in_throttle.sign_in_failed(address=address)
            raise ValidationError("That is not the password of this account.")
        sign_in_throttle.sign_in_succeeded(username=username)
        return self.cleaned_data


def _account_create(email: str, password: str):
    return get_user_model().objects.create_user(username=email, email=email, password=password)


def _accept_page(request, context, status=200):
    return TemplateResponse(request, "dashboard/team/accept.html", context, status=status)


@require_http_methods(["GET", "POST"])
def invitation_accept_view(request, token: str):
    try:
        invitation = invitation_for_token(token)
    except InvitationInvalid as invalid:
        return _accept_page(request, {"invalid": str(invalid)}, status=410)
    candidates = list(member_users_with_email(invitation.email).order_by("pk"))
    data = request.POST if request.method == "POST" else None
    if candidates:
        form = ExistingAccountForm(data, request=request, candidates=candidates)
    else:
        form = NewAccountForm(data, email=invitation.email)
    context = {"invitation": invitation, "form": form, "existing": bool(candidates)}
    if data is None or not form.is_valid():
        return _accept_page(request, context, status=400 if data is not None else 200)
    try:
        with transaction.atomic():  # a new account exists only if it joined
            user = form.user if candidates else _account_create(invitation.email, form.cleaned_data["password1"])
            invitation_accept(token=token, actor=Actor(user=user, ip_address=request.META.get("REMOTE_ADDR") or None))
    except InvitationInvalid as invalid:  # used in another tab meanwhile
        return _accept_page(request, {"invalid": str(invalid)}, status=410)
    except IntegrityError:  # a disabled account already has this address as its username
        refused = "An account with this address exists but is disabled. Ask the person who invited you."
        return _accept_page(request, {"invalid": refused}, status=409)
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    request.session[SESSION_KEY] = invitation.tenant_id
    messages.success(
        request,
        f"Welcome to {invitation.tenant.name}: you joined as {invitation.get_role_display().lower()}. "
        f"Sign in next time as {user.get_username()}.",
    )
    return redirect("dashboard:index")
