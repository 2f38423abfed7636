"""The Team page: invitations by email (single use, expiring), roles, removal, the last owner; all in the audit log."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from django.utils import timezone

from tenants.models import AuditLogEntry, Invitation, Membership
from tenants.services import membership_add
from tests.dashboard.conftest import PASSWORD
from tests.factories import SETUP, UserFactory

NEW_PASSWORD = "a long and unusual passphrase 77"


@pytest.fixture(autouse=True)
def _locmem_mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.PUBLIC_BASE_URL = "https://verify.example"


def member(tenant, username, role):
    user = UserFactory(username=username, email=f"{username}@acme.test")
    user.set_password(PASSWORD)
    user.save()
    membership = membership_add(tenant=tenant, user=user, actor=SETUP)
    Membership.objects.filter(pk=membership.pk).update(role=role)
    client = Client()
    client.force_login(user)
    return client, Membership.objects.get(pk=membership.pk)


def invite(client, email, role):
    return client.post("/dashboard/team/", {"email": email, "role": role}, follow=True)


def link_in(message) -> str:
    (link,) = re.findall(r"https://verify\.example(/dashboard/invitations/[^\s]+/)", message.body)
    return link


def test_an_invited_person_sets_a_password_joins_with_the_role_and_the_link_works_once(
    dashboard, onboarded, staff_user
):
    page = invite(dashboard, "Bob@Partner.test", "developer").content.decode()

    assert "Invitation sent to bob@partner.test as developer" in page
    (message,) = mail.outbox
    assert message.to == ["bob@partner.test"] and onboarded.tenant.name in message.subject
    link = link_in(message)
    assert Invitation.objects.get().token_hash not in message.body  # only the token travels, only its hash is kept

    guest = Client()
    form = guest.get(link)
    assert form.status_code == 200 and "as <strong>developer</strong>" in form.content.decode()
    mismatch = guest.post(link, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD + "x"})
    assert mismatch.status_code == 400 and not get_user_model().objects.filter(username="bob@partner.test").exists()
    joined = guest.post(link, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD}, follow=True)

    assert joined.redirect_chain[-1][0] == "/dashboard/"
    assert "you joined as developer" in joined.content.decode()
    bob = get_user_model().objects.get(username="bob@partner.test")
    assert Membership.objects.get(user=bob, tenant=onboarded.tenant).role == "developer"
    again = Client().post(link, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD})
    assert again.status_code == 410 and "already used" in again.content.decode()
    signed_in = Client()
    assert signed_in.login(username="bob@partner.test", password=NEW_PASSWORD)
    assert signed_in.get("/dashboard/").status_code == 200
    log = list(
        AuditLogEntry.objects.exclude(actor_label=SETUP.label)
        .order_by("id")
        .values_list("action", "actor_id", "target_label")
    )
    assert log == [
        ("member.invited", staff_user.pk, "bob@partner.test"),
        ("member.joined", bob.pk, "bob@partner.test"),
    ]
    audit_page = dashboard.get("/dashboard/audit-log/").content.decode()
    assert "Member invited" in audit_page and "Invitation accepted" in audit_page and "Role: developer" in audit_page


def test_an_existing_account_joins_with_its_own_password(dashboard, onboarded, rival):
    mallory = get_user_model().objects.get(username="mallory")
    mallory.set_password(PASSWORD)
    mallory.save()
    invite(dashboard, "mallory@rival.test", "viewer")
    link = link_in(mail.outbox[0])

    page = Client().get(link).content.decode()
    assert "You already have an account" in page
    wrong = Client().post(link, {"password": "not it"})
    assert wrong.status_code == 400 and not Membership.objects.filter(user=mallory, tenant=onboarded.tenant).exists()
    Client().post(link, {"password": PASSWORD})

    assert Membership.objects.get(user=mallory, tenant=onboarded.tenant).role == "viewer"
    assert Membership.objects.filter(user=mallory, tenant=rival.tenant).exists()  # still in their own tenant


def test_an_expired_or_withdrawn_invitation_cannot_be_used(dashboard, onboarded):
    invite(dashboard, "late@partner.test", "viewer")
    invite(dashboard, "gone@partner.test", "viewer")
    late, gone = (link_in(message) for message in mail.outbox)
    Invitation.objects.filter(email="late@partner.test").update(expires_at=timezone.now() - timedelta(seconds=1))
    withdrawn = Invitation.objects.get(email="gone@partner.test")
    dashboard.post(f"/dashboard/team/invitations/{withdrawn.pk}/revoke/")

    for link, why in ((late, "has expired"), (gone, "was withdrawn")):
        answer = Client().post(link, {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD})
        assert answer.status_code == 410 and why in answer.content.decode()
    assert not get_user_model().objects.filter(email__in=["late@partner.test", "gone@partner.test"]).exists()
    assert Client().get("/dashboard/invitations/not-a-token/").status_code == 410
    assert AuditLogEntry.objects.filter(action="invitation.revoked", target_label="gone@partner.test").exists()


def test_a_bad_invitation_is_refused_with_the_reason(dashboard, onboarded, staff_user):
    taken = invite(dashboard, "alice@acme.test", "viewer")
    bad_email = invite(dashboard, "not an email", "viewer")
    bad_role = invite(dashboard, "carol@partner.test", "superuser")

    assert "is already a member" in taken.content.decode()
    assert "Enter a valid email address" in bad_email.content.decode()
    assert "Select a valid choice" in bad_role.content.decode()
    assert not mail.outbox and not Invitation.objects.exists()


def test_roles_change_and_members_are_removed_and_logged(dashboard, onboarded, staff_user):
    _, dev = member(onboarded.tenant, "dev", "developer")

    dashboard.post(f"/dashboard/team/members/{dev.pk}/role/", {"role": "admin"})
    assert Membership.objects.get(pk=dev.pk).role == "admin"
    dashboard.post(f"/dashboard/team/members/{dev.pk}/remove/")

    assert not Membership.objects.filter(pk=dev.pk).exists()
    log = list(AuditLogEntry.objects.exclude(actor_label=SETUP.label).order_by("id").values_list("action", "extra"))
    assert log == [
        ("member.role_changed", {"role": "admin", "previous_role": "developer"}),
        ("member.removed", {"role": "admin"}),
    ]
    assert "Member removed" in dashboard.get("/dashboard/audit-log/").content.decode()


def test_the_last_owner_can_be_neither_removed_nor_demoted(dashboard, onboarded, staff_user):
    alice = Membership.objects.get(user=staff_user)
    assert alice.role == "owner"

    demoted = dashboard.post(f"/dashboard/team/members/{alice.pk}/role/", {"role": "admin"}, follow=True)
    removed = dashboard.post(f"/dashboard/team/members/{alice.pk}/remove/", follow=True)

    assert "the last owner" in demoted.content.decode() and "the last owner" in removed.content.decode()
    assert Membership.objects.get(pk=alice.pk).role == "owner"
    _, second = member(onboarded.tenant, "olga", "admin")
    dashboard.post(f"/dashboard/team/members/{second.pk}/role/", {"role": "owner"})
    dashboard.post(f"/dashboard/team/members/{alice.pk}/remove/")  # now there is another owner
    assert not Membership.objects.filter(pk=alice.pk).exists()


def test_an_admin_manages_members_but_not_owners(onboarded, staff_user):
    admin, _ = member(onboarded.tenant, "adam", "admin")
    _, dev = member(onboarded.tenant, "dev", "developer")
    owner = Membership.objects.get(user=staff_user)

    for refused in (
        admin.post(f"/dashboard/team/members/{owner.pk}/role/", {"role": "viewer"}),
        admin.post(f"/dashboard/team/members/{owner.pk}/remove/"),
        admin.post(f"/dashboard/team/members/{dev.pk}/role/", {"role": "owner"}),
    ):
        assert refused.status_code == 403
    assert invite(admin, "boss@partner.test", "owner").status_code == 400  # not a role an admin may give
    assert (Membership.objects.get(pk=owner.pk).role, Membership.objects.get(pk=dev.pk).role) == ("owner", "developer")

    admin.post(f"/dashboard/team/members/{dev.pk}/role/", {"role": "viewer"})
    invite(admin, "eve@partner.test", "developer")
    assert Membership.objects.get(pk=dev.pk).role == "viewer" and len(mail.outbox) == 1
    page = admin.get("/dashboard/team/").content.decode()
    assert 'value="owner"' not in page  # no owner option offered to an admin


@pytest.mark.parametrize("role", ["developer", "viewer"])
def test_developers_and_viewers_cannot_manage_the_team(onboarded, staff_user, role):
    client, _ = member(onboarded.tenant, "someone", role)
    owner = Membership.objects.get(user=staff_user)

    assert client.get("/dashboard/team/").status_code == 200  # everyone sees who is on the team
    assert "invite-form" not in client.get("/dashboard/team/").content.decode()
    assert invite(client, "x@partner.test", "viewer").status_code == 403
    assert client.post(f"/dashboard/team/members/{owner.pk}/remove/").status_code == 403
    assert not mail.outbox and not Invitation.objects.exists()


def test_members_of_another_tenant_are_not_found(dashboard, onboarded, rival):
    theirs = Membership.objects.get(tenant=rival.tenant)
    assert dashboard.post(f"/dashboard/team/members/{theirs.pk}/remove/").status_code == 404
    assert dashboard.post(f"/dashboard/team/members/{theirs.pk}/role/", {"role": "viewer"}).status_code == 404


def test_an_invitation_to_the_address_of_a_disabled_account_creates_nothing(dashboard, onboarded):
    UserFactory(username="off@partner.test", email="off@partner.test", is_active=False)
    invite(dashboard, "off@partner.test", "viewer")

    answer = Client().post(link_in(mail.outbox[0]), {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD})

    assert answer.status_code == 409 and "is disabled" in answer.content.decode()
    assert not Membership.objects.filter(user__username="off@partner.test").exists()
    assert Invitation.objects.get().accepted_at is None
