"""The Age passes page: the tenant sets its own pass policy (offer, accept, minimum method, proof age, lifetime)."""

import re

import pytest

from tenants.models import AuditLogEntry
from tests.dashboard.test_roles import signed_in
from tests.factories import SETUP
from tests.support.flow import open_flow

USE_BUTTON = "Use my age pass"
POLICY = {
    "offer_saving": "on",
    "accept_passes": "on",
    "minimum_method": "digital_id",
    "max_proof_age_days": "90",
    "lifetime_days": "180",
}


@pytest.fixture(autouse=True)
def _face_path_on(face_path_on):
    """The flow's first page is the one that offers a pass."""


def save(client, **fields):
    return client.post("/dashboard/age-passes/", {**POLICY, **fields})


def test_a_policy_saved_in_the_dashboard_is_what_the_flow_offers(dashboard, onboarded, api):
    before = open_flow(api).client.get("/flow/").content.decode()
    assert USE_BUTTON not in before  # no policy: passes are neither offered nor accepted

    response = save(dashboard)

    assert response.status_code == 302
    page = dashboard.get("/dashboard/age-passes/").content.decode()
    assert "Age pass policy saved" in page
    assert re.search(r'<input type="checkbox" name="accept_passes"[^>]* checked>', page)
    assert '<option value="digital_id" selected>' in page
    assert 'value="90"' in page and 'value="180"' in page
    assert USE_BUTTON in open_flow(api).client.get("/flow/").content.decode()

    save(dashboard, accept_passes="")
    assert USE_BUTTON not in open_flow(api).client.get("/flow/").content.decode()


def test_each_change_is_in_the_audit_log_with_its_old_and_new_value(dashboard, onboarded, staff_user):
    save(dashboard)
    save(dashboard, minimum_method="document", lifetime_days="")
    save(dashboard, minimum_method="document", lifetime_days="")  # nothing changed: nothing recorded

    first, second = AuditLogEntry.objects.filter(action="age_pass_policy.changed").order_by("created_at", "id")
    assert (second.tenant_id, second.actor_id) == (onboarded.tenant.id, staff_user.pk)
    assert second.extra == {
        "minimum method": "Digital ID (wallet credential) → Identity document",
        "lifetime days": "180 → (deployment's)",
    }
    assert first.extra["accept passes"] == "no → yes"
    log = dashboard.get("/dashboard/audit-log/").content.decode()
    assert "Age pass policy changed" in log and "Digital ID (wallet credential) → Identity document" in log


@pytest.mark.parametrize(
    "fields, error",
    [
        ({"minimum_method": "selfie"}, "Select a valid choice"),
        ({"max_proof_age_days": "0"}, "greater than or equal to 1"),
        ({"lifetime_days": "-5"}, "greater than or equal to 1"),
    ],
)
def test_a_bad_value_is_refused_and_nothing_is_saved(dashboard, onboarded, api, fields, error):
    response = save(dashboard, **fields)

    assert response.status_code == 400
    assert error in response.content.decode()
    assert not AuditLogEntry.objects.exclude(actor_label=SETUP.label).exists()
    assert USE_BUTTON not in open_flow(api).client.get("/flow/").content.decode()


@pytest.mark.parametrize("role", ["developer", "viewer"])
def test_only_owners_and_admins_change_the_policy(onboarded, api, role):
    member = signed_in(onboarded.tenant, role)

    page = member.get("/dashboard/age-passes/").content.decode()
    refused = save(member)

    assert "Save policy" not in page and "owners and admins can" in page
    assert refused.status_code == 403
    assert USE_BUTTON not in open_flow(api).client.get("/flow/").content.decode()
    assert save(signed_in(onboarded.tenant, "admin")).status_code == 302
