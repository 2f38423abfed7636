"""A user in several tenants switches between them; the choice is kept in the session and re-checked each time."""

import re

import pytest
from django.test import Client

from tenants.models import AuditLogEntry, Membership
from tenants.services import membership_add
from tests.factories import SETUP, finished_session


def _shown_tenant_id(client) -> str:
    return re.search(r'<code id="tenant-id"[^>]*>([^<]+)</code>', client.get("/dashboard/").content.decode()).group(1)


@pytest.fixture
def two_tenant_client(staff_user, rival):
    membership_add(tenant=rival.tenant, user=staff_user, actor=SETUP)
    client = Client()
    client.force_login(staff_user)
    return client


def test_a_member_of_several_tenants_gets_a_switcher_and_changes_tenant(two_tenant_client, onboarded, rival):
    home = two_tenant_client.get("/dashboard/").content.decode()
    assert 'id="tenant-switcher"' in home and "Rival Inc" in home
    assert _shown_tenant_id(two_tenant_client) == onboarded.tenant.id  # the first by name comes first

    response = two_tenant_client.post(
        "/dashboard/tenant/switch/", {"tenant": rival.tenant.id, "next": "/dashboard/webhooks/"}
    )

    assert response.status_code == 302 and response["Location"] == "/dashboard/webhooks/"
    assert _shown_tenant_id(two_tenant_client) == rival.tenant.id


def test_after_switching_pages_and_actions_act_on_the_new_tenant_only(two_tenant_client, onboarded, rival):
    own = finished_session(onboarded.tenant)
    theirs = finished_session(rival.tenant)
    assert two_tenant_client.get(f"/dashboard/sessions/{theirs.id}/").status_code == 404

    two_tenant_client.post("/dashboard/tenant/switch/", {"tenant": rival.tenant.id})

    assert two_tenant_client.get(f"/dashboard/sessions/{theirs.id}/").status_code == 200
    assert two_tenant_client.get(f"/dashboard/sessions/{own.id}/").status_code == 404
    two_tenant_client.post("/dashboard/keys/generate/", {"mode": "test", "label": "from-switch"})
    assert rival.tenant.api_keys.filter(label="from-switch").exists()
    assert not onboarded.tenant.api_keys.filter(label="from-switch").exists()


def test_a_single_tenant_member_sees_no_switcher(dashboard):
    assert 'id="tenant-switcher"' not in dashboard.get("/dashboard/").content.decode()


def test_switching_needs_a_post(two_tenant_client, rival):
    assert two_tenant_client.get("/dashboard/tenant/switch/", {"tenant": rival.tenant.id}).status_code == 405


def test_losing_the_chosen_tenants_membership_falls_back_to_another(two_tenant_client, onboarded, rival, staff_user):
    two_tenant_client.post("/dashboard/tenant/switch/", {"tenant": rival.tenant.id})

    Membership.objects.filter(user=staff_user, tenant=rival.tenant).delete()

    home = two_tenant_client.get("/dashboard/").content.decode()
    assert _shown_tenant_id(two_tenant_client) == onboarded.tenant.id
    assert rival.tenant.id not in home and 'id="tenant-switcher"' not in home


def test_switching_to_a_tenant_that_does_not_exist_is_a_404(two_tenant_client):
    assert two_tenant_client.post("/dashboard/tenant/switch/", {"tenant": "ten_nope"}).status_code == 404
    assert two_tenant_client.post("/dashboard/tenant/switch/", {}).status_code == 404


def _form_tenant(client, path: str, action: str) -> str:
    """The tenant a page's form (the one posting to `action`) says it was shown for."""
    page = client.get(path).content.decode()
    form = page.split(f'action="{action}', 1)[1] if action != path else page.split('<form method="post"', 1)[1]
    return re.search(r'name="tenant" value="([^"]+)"', form.split("</form>", 1)[0]).group(1)


def test_a_form_left_open_for_one_tenant_changes_nothing_after_a_switch_in_another_tab(
    two_tenant_client, onboarded, rival
):
    forms = {
        "/dashboard/keys/generate/": _form_tenant(two_tenant_client, "/dashboard/", "/dashboard/keys/generate/"),
        "/dashboard/webhooks/secret/reveal/": _form_tenant(
            two_tenant_client, "/dashboard/webhooks/", "/dashboard/webhooks/secret/reveal/"
        ),
        "/dashboard/webhooks/secret/rotate/": _form_tenant(
            two_tenant_client, "/dashboard/webhooks/secret/rotate/", "/dashboard/webhooks/secret/rotate/"
        ),
    }
    assert set(forms.values()) == {onboarded.tenant.id}
    two_tenant_client.post("/dashboard/tenant/switch/", {"tenant": rival.tenant.id})  # in another tab
    secret, keys = rival.tenant.webhook_secret, rival.tenant.api_keys.count()

    for action, shown_for in forms.items():
        response = two_tenant_client.post(action, {"tenant": shown_for, "mode": "live"}, follow=True)
        assert "Nothing was changed" in response.content.decode(), action
        assert rival.tenant.webhook_secret not in response.content.decode()

    rival.tenant.refresh_from_db()
    assert (rival.tenant.webhook_secret, rival.tenant.api_keys.count()) == (secret, keys)
    assert not AuditLogEntry.objects.exclude(actor_label=SETUP.label).exists()
    generated = two_tenant_client.post("/dashboard/keys/generate/", {"tenant": rival.tenant.id, "mode": "live"})
    assert generated.status_code == 200 and rival.tenant.api_keys.count() == keys + 1
