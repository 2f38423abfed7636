"""The owning service is the only door (issue 46): a key or a webhook secret changed through the dashboard,
the operators' admin or a management command leaves exactly one audit row, naming who did it."""

import getpass
import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from tenants.models import ApiKey, AuditLogEntry, PublishableKey, Tenant
from tenants.services import membership_add
from tests.factories import SETUP, UserFactory
from tests.support.api_client import ApiClient

ALICE = "alice <alice@acme.test>"  # the dashboard's staff_user, as the audit log names her
OPERATOR = "operator (AgeVerify operator)"  # the operators' admin's signed-in user (conftest's `operator`)


def _command_label(name: str) -> str:
    return f"manage.py {name} (run by {getpass.getuser()})"


@pytest.fixture
def staff_user(onboarded):
    user = UserFactory(username="alice", email="alice@acme.test")
    membership_add(tenant=onboarded.tenant, user=user, actor=SETUP)
    return user


@pytest.fixture
def dashboard(staff_user):
    """The tenant's dashboard, signed in as its owner alice."""
    client = Client()
    client.force_login(staff_user)
    return client


class NewRows:
    """The audit rows written after it was made: the door under test must leave exactly one."""

    def __init__(self):
        self.after = AuditLogEntry.objects.order_by("-id").values_list("id", flat=True).first() or 0

    def one(self) -> AuditLogEntry:
        rows = list(AuditLogEntry.objects.filter(id__gt=self.after))
        assert len(rows) == 1, [(row.action, row.actor_label) for row in rows]
        return rows[0]


def _command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _admin_action(operator, model: str, action: str, *pks):
    response = operator.post(
        f"/admin/tenants/{model}/", {"action": action, "_selected_action": [str(pk) for pk in pks]}
    )
    assert response.status_code == 302, response.content
    return response


def _live_key(onboarded) -> ApiKey:
    return ApiKey.objects.get(tenant=onboarded.tenant, mode="live", revoked_at__isnull=True)


# --- Revoking a secret API key: dashboard, admin, command ---


def test_revoking_a_key_in_the_dashboard_leaves_one_row_naming_the_staff_member(dashboard, onboarded, staff_user):
    key, rows = _live_key(onboarded), NewRows()

    dashboard.post(f"/dashboard/keys/{key.pk}/revoke/", REMOTE_ADDR="198.51.100.4")

    row = rows.one()
    assert (row.action, row.actor_label, row.actor, row.ip_address) == (
        "api_key.revoked",
        ALICE,
        staff_user,
        "198.51.100.4",
    )
    assert row.target_id == str(key.pk) and row.tenant == onboarded.tenant
    assert ApiClient(onboarded.live_key).post("/v1/sessions", {"subject": "user-1", "age_limit": 18}).status_code == 401


def test_revoking_a_key_in_the_operators_admin_leaves_one_row_naming_the_operator(operator, onboarded):
    key, rows = _live_key(onboarded), NewRows()

    _admin_action(operator, "apikey", "revoke", key.pk)

    row = rows.one()
    assert (row.action, row.actor_label, row.target_id) == ("api_key.revoked", OPERATOR, str(key.pk))
    assert row.actor.username == "operator"
    assert ApiClient(onboarded.live_key).post("/v1/sessions", {"subject": "user-1", "age_limit": 18}).status_code == 401


def test_revoking_a_key_by_command_leaves_one_row_naming_the_command(onboarded):
    key, rows = _live_key(onboarded), NewRows()

    printed = _command("api_key_revoke", key.display_prefix)

    row = rows.one()
    assert (row.action, row.actor_label, row.actor, row.target_id) == (
        "api_key.revoked",
        _command_label("api_key_revoke"),
        None,
        str(key.pk),
    )
    assert f"{key.display_prefix} of Acme Games is revoked" in printed
    assert ApiClient(onboarded.live_key).post("/v1/sessions", {"subject": "user-1", "age_limit": 18}).status_code == 401


def test_revoking_a_revoked_key_again_through_any_door_adds_no_row(dashboard, operator, onboarded):
    key = _live_key(onboarded)
    _command("api_key_revoke", key.display_prefix)
    rows = NewRows()

    dashboard.post(f"/dashboard/keys/{key.pk}/revoke/")
    _admin_action(operator, "apikey", "revoke", key.pk)
    printed = _command("api_key_revoke", key.display_prefix)

    assert not AuditLogEntry.objects.filter(id__gt=rows.after).exists()
    assert "was already revoked" in printed


def test_the_operators_admin_cannot_delete_a_key_past_the_audit_log(operator, onboarded):
    key = _live_key(onboarded)

    assert operator.post(f"/admin/tenants/apikey/{key.pk}/delete/", {"post": "yes"}).status_code == 403
    assert ApiKey.objects.filter(pk=key.pk).exists()


# --- Generating a secret API key: dashboard and command (the admin shows no raw key, so makes none) ---


def test_generating_a_key_in_the_dashboard_or_by_command_leaves_one_row_each(dashboard, onboarded, staff_user):
    rows = NewRows()
    assert dashboard.post("/dashboard/keys/generate/", {"mode": "test", "label": "ci"}).status_code == 200
    by_dashboard = rows.one()

    rows = NewRows()
    printed = json.loads(_command("api_key_generate", onboarded.tenant.pk, "--mode", "test", "--label", "cron"))
    by_command = rows.one()

    assert (by_dashboard.action, by_dashboard.actor_label) == ("api_key.generated", ALICE)
    assert (by_command.action, by_command.actor_label) == ("api_key.generated", _command_label("api_key_generate"))
    assert by_command.target_label == printed["prefix"] and by_command.extra == {"mode": "test", "label": "cron"}
    assert ApiClient(printed["api_key"]).post("/v1/sessions", {"subject": "user-1", "age_limit": 18}).status_code == 201


def test_the_ten_active_keys_cap_holds_at_every_door(dashboard, onboarded):
    for number in range(8):  # onboarding made one test key: ten active ones now
        _command("api_key_generate", onboarded.tenant.pk, "--mode", "test", "--label", f"k{number}")
    _command("api_key_generate", onboarded.tenant.pk, "--mode", "test")
    rows = NewRows()

    with pytest.raises(Exception, match="already has 10 active test keys"):
        _command("api_key_generate", onboarded.tenant.pk, "--mode", "test")
    refused = dashboard.post("/dashboard/keys/generate/", {"mode": "test", "label": "one more"})

    assert refused.status_code == 400 and b"already has 10 active test keys" in refused.content
    assert ApiKey.objects.filter(tenant=onboarded.tenant, mode="test", revoked_at__isnull=True).count() == 10
    assert not AuditLogEntry.objects.filter(id__gt=rows.after).exists()


# --- Rotating a webhook signing secret: dashboard, admin, command ---


@pytest.mark.parametrize("mode", ["live", "test"])
def test_rotating_a_webhook_secret_through_each_door_leaves_one_row_each(
    dashboard, operator, onboarded, staff_user, mode
):
    tenant = onboarded.tenant
    field = "test_webhook_secret" if mode == "test" else "webhook_secret"
    secrets = [getattr(Tenant.objects.get(pk=tenant.pk), field)]
    doors = {
        ALICE: lambda: dashboard.post("/dashboard/webhooks/secret/rotate/", {"mode": mode}),
        OPERATOR: lambda: _admin_action(operator, "tenant", f"rotate_{mode}_webhook_secret", tenant.pk),
        _command_label("webhook_secret_rotate"): lambda: _command("webhook_secret_rotate", tenant.pk, "--mode", mode),
    }
    for who, door in doors.items():
        rows = NewRows()
        door()
        row = rows.one()
        secrets.append(getattr(Tenant.objects.get(pk=tenant.pk), field))
        assert (row.action, row.actor_label, row.extra["mode"]) == ("webhook_secret.rotated", who, mode)
        assert row.target_label == f"whsec_…{secrets[-1][-4:]}"
        assert row.extra["previous"] == f"whsec_…{secrets[-2][-4:]}"
    assert len(set(secrets)) == 4  # each door made a new secret


def test_the_rotation_command_prints_the_new_secret_that_signs_from_now_on(onboarded):
    printed = json.loads(_command("webhook_secret_rotate", onboarded.tenant.pk))

    tenant = Tenant.objects.get(pk=onboarded.tenant.pk)
    assert printed["webhook_secret"] == tenant.webhook_secret != onboarded.tenant.webhook_secret
    assert printed["previous_signs_until"] == tenant.webhook_secret_previous_expires_at.isoformat()


# --- Publishable keys in the operators' admin: made and revoked by the service, audited ---


def test_a_publishable_key_added_and_revoked_in_the_admin_leaves_one_row_each(operator, onboarded):
    rows = NewRows()
    added = operator.post(
        "/admin/tenants/publishablekey/add/",
        {"tenant": onboarded.tenant.pk, "mode": "test", "label": "shop", "allowed_origins": "https://shop.example"},
    )
    assert added.status_code == 302, added.content
    generated = rows.one()
    key = PublishableKey.objects.get(tenant=onboarded.tenant, label="shop")

    rows = NewRows()
    _admin_action(operator, "publishablekey", "revoke", key.pk)
    revoked = rows.one()

    assert (generated.action, generated.actor_label, generated.target_label) == (
        "publishable_key.generated",
        OPERATOR,
        key.key,
    )
    assert key.key.startswith("av_pk_test_") and key.allowed_origins == ["https://shop.example"]
    assert (revoked.action, revoked.actor_label) == ("publishable_key.revoked", OPERATOR)


# --- Tenants: onboarding and settings, from the commands and the admin ---


def test_onboarding_by_command_leaves_one_row_naming_the_command(db):
    rows = NewRows()

    printed = json.loads(_command("create_tenant", "Beta Shop"))

    row = rows.one()
    assert (row.action, row.actor_label, row.tenant_id) == (
        "tenant.created",
        _command_label("create_tenant"),
        printed["tenant_id"],
    )
    assert row.extra == {
        "live key": ApiKey.objects.get(tenant_id=printed["tenant_id"], mode="live").display_prefix,
        "test key": ApiKey.objects.get(tenant_id=printed["tenant_id"], mode="test").display_prefix,
    }


def test_disabling_a_tenant_in_the_admin_leaves_one_row_with_the_old_and_new_value(operator, onboarded):
    rows = NewRows()

    _admin_action(operator, "tenant", "disable_tenants", onboarded.tenant.pk)

    row = rows.one()
    assert (row.action, row.actor_label, row.extra) == ("tenant.changed", OPERATOR, {"enabled": "yes → no"})
    assert ApiClient(onboarded.live_key).post("/v1/sessions", {"subject": "user-1", "age_limit": 18}).status_code == 403


def _tenant_change_form(operator, tenant) -> dict:
    """The tenant's admin form as the page fills it in, with no inline row (the tenant has no member yet)."""
    form = operator.get(f"/admin/tenants/tenant/{tenant.pk}/change/").context["adminform"].form
    filled = {field.name: field.value() for field in form if field.value() is not None}
    filled = {name: value for name, value in filled.items() if not isinstance(value, bool)}  # a box: "on" or absent
    filled.update({name: "on" for name, value in form.initial.items() if value is True and name in form.fields})
    for prefix in ("api_keys", "memberships"):
        filled.update({f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"})
    return filled


def test_a_tenant_changed_in_the_admins_form_leaves_one_row_of_what_changed(operator, onboarded):
    form = {**_tenant_change_form(operator, onboarded.tenant), "session_ttl_seconds": "900", "retention_days": "30"}
    rows = NewRows()

    response = operator.post(f"/admin/tenants/tenant/{onboarded.tenant.pk}/change/", form)

    assert response.status_code == 302, response.context["adminform"].form.errors if response.context else response
    row = rows.one()
    assert (row.action, row.actor_label) == ("tenant.changed", OPERATOR)
    assert row.extra == {"session ttl seconds": "3600 → 900", "retention days": "90 → 30"}


def test_a_member_added_inline_on_the_tenants_page_leaves_one_row(operator, onboarded):
    bob = UserFactory(username="bob", email="bob@acme.test")
    form = {
        **_tenant_change_form(operator, onboarded.tenant),
        "memberships-TOTAL_FORMS": "1",
        "memberships-0-user": str(bob.pk),
        "memberships-0-role": "admin",
        "memberships-0-tenant": onboarded.tenant.pk,
    }
    rows = NewRows()

    response = operator.post(f"/admin/tenants/tenant/{onboarded.tenant.pk}/change/", form)

    assert response.status_code == 302, response.context["inline_admin_formsets"] if response.context else response
    row = rows.one()
    assert (row.action, row.actor_label, row.target_label, row.extra) == (
        "member.added",
        OPERATOR,
        "bob <bob@acme.test>",
        {"role": "admin"},
    )
    assert bob.tenant_memberships.get().role == "admin"


def test_a_tenant_onboarded_in_the_admin_leaves_one_row_and_no_key_that_nobody_saw(operator):
    from tests.dashboard.test_operators_admin import TENANT_ADD_FORM

    rows = NewRows()

    assert operator.post("/admin/tenants/tenant/add/", TENANT_ADD_FORM).status_code == 302

    row = rows.one()
    assert (row.action, row.actor_label, row.tenant.name) == ("tenant.created", OPERATOR, "Added By Hand")
    assert not ApiKey.objects.filter(tenant=row.tenant).exists()


def test_the_demo_seed_names_itself_in_the_demo_tenants_log(settings, tmp_path, db):
    settings.DEBUG, settings.VAR_DIR = True, tmp_path
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

    _command("demo_seed", "--json")

    log = list(AuditLogEntry.objects.order_by("id").values_list("action", "actor_label"))
    assert log == [
        ("tenant.created", _command_label("demo_seed")),
        ("member.added", _command_label("demo_seed")),
    ]


# --- The team and the pass policy, from the operators' admin ---


def test_a_member_added_changed_and_removed_in_the_admin_leaves_one_row_each(operator, onboarded, staff_user):
    bob = UserFactory(username="bob", email="bob@acme.test")
    rows = NewRows()
    added = operator.post(
        "/admin/tenants/membership/add/", {"user": bob.pk, "tenant": onboarded.tenant.pk, "role": "viewer"}
    )
    assert added.status_code == 302, added.content
    joined = rows.one()
    membership = bob.tenant_memberships.get()

    rows = NewRows()
    operator.post(f"/admin/tenants/membership/{membership.pk}/change/", {"role": "developer"})
    changed = rows.one()

    rows = NewRows()
    operator.post(f"/admin/tenants/membership/{membership.pk}/delete/", {"post": "yes"})
    removed = rows.one()

    assert [(row.action, row.actor_label, row.target_label) for row in (joined, changed, removed)] == [
        ("member.added", OPERATOR, "bob <bob@acme.test>"),
        ("member.role_changed", OPERATOR, "bob <bob@acme.test>"),
        ("member.removed", OPERATOR, "bob <bob@acme.test>"),
    ]
    assert (joined.extra, changed.extra) == ({"role": "viewer"}, {"role": "developer", "previous_role": "viewer"})
    assert not bob.tenant_memberships.exists()


def test_the_admin_cannot_remove_a_tenants_last_owner_and_records_nothing(operator, onboarded, staff_user):
    membership = staff_user.tenant_memberships.get()
    rows = NewRows()

    response = operator.post(f"/admin/tenants/membership/{membership.pk}/delete/", {"post": "yes"}, follow=True)

    assert "last owner of Acme Games" in response.content.decode()
    assert "deleted successfully" not in response.content.decode()
    assert staff_user.tenant_memberships.exists()
    assert not AuditLogEntry.objects.filter(id__gt=rows.after).exists()


def test_a_pass_policy_set_in_the_admin_leaves_one_row_naming_the_operator(operator, onboarded):
    rows = NewRows()

    response = operator.post(
        "/admin/age_passes/agepasspolicy/add/",
        {"tenant": onboarded.tenant.pk, "accept_passes": "on", "minimum_method": "document", "lifetime_days": "30"},
    )

    assert response.status_code == 302
    row = rows.one()
    assert (row.action, row.actor_label) == ("age_pass_policy.changed", OPERATOR)
    assert row.extra["accept passes"] == "no → yes" and row.extra["lifetime days"] == "(deployment's) → 30"


# --- Where the rows are read ---


def test_the_tenants_dashboard_log_shows_what_operators_and_commands_did(dashboard, operator, onboarded):
    key = _live_key(onboarded)
    _admin_action(operator, "apikey", "revoke", key.pk)
    _command("webhook_secret_rotate", onboarded.tenant.pk)

    page = dashboard.get("/dashboard/audit-log/").content.decode()

    assert "operator (AgeVerify operator)" in page and key.display_prefix in page
    assert f"manage.py webhook_secret_rotate (run by {getpass.getuser()})" in page


def test_the_operators_old_audit_log_address_leads_to_its_new_one(operator, onboarded):
    response = operator.get("/admin/dashboard/auditlogentry/?action__exact=tenant.created")

    assert response.status_code == 301
    assert response["Location"] == "/admin/tenants/auditlogentry/?action__exact=tenant.created"
    assert "Acme Games" in operator.get(response["Location"]).content.decode()
