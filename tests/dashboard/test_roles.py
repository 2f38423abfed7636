"""What each role may do, checked on the server: a viewer never sees a secret and changes nothing, by any URL."""

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver

from age_passes.models import AgePassPolicy
from dashboard.sites import dashboard_site
from tenants.models import ApiKey, AuditLogEntry, Membership, PublishableKey, Tenant, TenantBranding
from tenants.services import membership_add, publishable_key_generate
from tests.factories import SETUP, UserFactory, finished_session
from webhooks.models import WebhookDelivery
from webhooks.services import webhook_test_send

# Routes that change nothing (or only the signed-in person's own session and password), open to every role.
READS = {
    "index",
    "login",
    "logout",
    "password_change",
    "password_change_done",
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
    "tenant_switch",
    "webhooks",
    "invitation_accept",
    "sessions_api_verificationsession_changelist",
    "sessions_api_verificationsession_change",
    "tenants_auditlogentry_changelist",
    # What the session list shows, as a file or as a funnel: a viewer reads sessions (no secret is in them).
    "session_export",
    "funnel",
}


def _names(patterns):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _names(pattern.url_patterns)
        elif isinstance(pattern, URLPattern) and pattern.name:
            yield pattern.name


@pytest.fixture
def world(onboarded, staff_user, receiver):
    """A tenant with something behind every action: keys, a publishable key, a delivery, a final session, a member."""
    tenant = onboarded.tenant
    return {
        "key_id": ApiKey.objects.filter(tenant=tenant).first().pk,
        "pk_id": publishable_key_generate(tenant=tenant, mode="test", actor=SETUP).pk,
        "delivery_id": webhook_test_send(tenant=tenant, mode="live", url=receiver.url(), actor=SETUP).pk,
        "session_id": finished_session(tenant).pk,
        "membership_id": Membership.objects.get(user=staff_user).pk,
    }


def actions(world) -> dict[str, tuple[str, dict]]:
    """Every route that changes something or shows a secret, with a request that would do it for an owner."""
    return {
        "key_generate": ("/dashboard/keys/generate/", {"mode": "live", "label": "x"}),
        "key_revoke": (f"/dashboard/keys/{world['key_id']}/revoke/", {}),
        "sdk_keys": ("/dashboard/sdk/", {"mode": "test", "label": "x"}),
        "sdk_key_edit": (f"/dashboard/sdk/{world['pk_id']}/", {"label": "changed"}),
        "sdk_key_revoke": (f"/dashboard/sdk/{world['pk_id']}/revoke/", {}),
        "webhook_secret_reveal": ("/dashboard/webhooks/secret/reveal/", {"mode": "live"}),
        "webhook_secret_rotate": ("/dashboard/webhooks/secret/rotate/", {"mode": "live"}),
        "delivery_resend": (f"/dashboard/webhooks/deliveries/{world['delivery_id']}/resend/", {}),
        "webhook_address_save": ("/dashboard/webhooks/address/", {"mode": "live", "url": "https://p.example/h"}),
        "webhook_test_send": ("/dashboard/webhooks/test/", {"mode": "live"}),
        "webhook_events_save": ("/dashboard/webhooks/events/", {"mode": "live", "events": ["verification.started"]}),
        "branding": (
            "/dashboard/branding/",
            {"display_name": "Hijacked", "accent_color": "", "privacy_notice_url": ""},
        ),
        "age_pass_policy": ("/dashboard/age-passes/", {"accept_passes": "on", "minimum_method": "face"}),
        "session_redact": (f"/dashboard/sessions/{world['session_id']}/redact/", {"confirm": "erase"}),
        "team": ("/dashboard/team/", {"email": "x@partner.test", "role": "viewer"}),
        "member_role": (f"/dashboard/team/members/{world['membership_id']}/role/", {"role": "viewer"}),
        "member_remove": (f"/dashboard/team/members/{world['membership_id']}/remove/", {}),
        "invitation_revoke": ("/dashboard/team/invitations/1/revoke/", {}),
    }


def signed_in(tenant, role):
    user = UserFactory(username=f"a-{role}", email=f"{role}@acme.test")
    membership = membership_add(tenant=tenant, user=user, actor=SETUP)
    Membership.objects.filter(pk=membership.pk).update(role=role)
    client = Client()
    client.force_login(user)
    return client


def snapshot(tenant):
    """Everything the actions could change, to compare before and after."""
    tenant = Tenant.objects.get(pk=tenant.pk)
    return {
        "keys": list(ApiKey.objects.filter(tenant=tenant).values_list("pk", "revoked_at")),
        "publishable": list(PublishableKey.objects.filter(tenant=tenant).values_list("pk", "label", "revoked_at")),
        "secrets": (tenant.webhook_secret, tenant.test_webhook_secret, tenant.webhook_extra_events),
        "deliveries": WebhookDelivery.objects.count(),
        "branding": TenantBranding.objects.filter(tenant=tenant).exists(),
        "age_pass_policy": AgePassPolicy.objects.filter(tenant=tenant).exists(),
        "members": list(Membership.objects.filter(tenant=tenant).values_list("pk", "role")),
        "redacted": tenant.sessions.filter(redacted_at__isnull=False).count(),
        "audit": AuditLogEntry.objects.count(),
    }


def test_every_route_of_the_dashboard_is_either_a_read_or_a_checked_action(world):
    routes = set(_names(dashboard_site.get_urls()))
    assert routes == READS | set(actions(world))


def test_a_viewer_can_do_none_of_the_actions_by_direct_request_and_sees_no_secret(onboarded, world):
    viewer = signed_in(onboarded.tenant, "viewer")
    tenant = Tenant.objects.get(pk=onboarded.tenant.pk)
    secrets = [tenant.webhook_secret, tenant.test_webhook_secret]
    before = snapshot(tenant)

    for name, (url, data) in actions(world).items():
        answer = viewer.post(url, data)
        assert answer.status_code == 403, name
        body = answer.content.decode()
        assert "Not allowed for your role" in body and "<strong>Viewer</strong>" in body, name
        assert not any(secret in body for secret in secrets), name
        assert "av_live_" not in body.replace(tenant.api_keys.first().display_prefix, ""), name

    assert snapshot(tenant) == before
    for url in ("/dashboard/", "/dashboard/webhooks/", "/dashboard/sdk/", "/dashboard/team/", "/dashboard/audit-log/"):
        page = viewer.get(url)
        assert page.status_code == 200, url
        assert not any(secret in page.content.decode() for secret in secrets), url
    webhooks = viewer.get("/dashboard/webhooks/").content.decode()
    assert "webhook_secret_reveal" not in webhooks and "/secret/reveal/" not in webhooks  # no button either
    for url in ("/dashboard/webhooks/secret/rotate/?mode=live", f"/dashboard/keys/{world['key_id']}/revoke/"):
        assert viewer.get(url).status_code == 403, url


def test_a_developer_manages_keys_and_webhooks_but_not_the_team_branding_pass_policy_or_redaction(onboarded, world):
    developer = signed_in(onboarded.tenant, "developer")
    tenant = Tenant.objects.get(pk=onboarded.tenant.pk)

    revealed = developer.post("/dashboard/webhooks/secret/reveal/", {"mode": "live"})
    assert revealed.status_code == 200 and tenant.webhook_secret in revealed.content.decode()
    assert developer.post("/dashboard/keys/generate/", {"mode": "test", "label": "ci"}).status_code == 200
    for name in ("team", "member_role", "member_remove", "branding", "age_pass_policy", "session_redact"):
        url, data = actions(world)[name]
        assert developer.post(url, data).status_code == 403, name


def test_an_admin_may_change_the_branding_and_pass_policy_and_redact(onboarded, world):
    admin = signed_in(onboarded.tenant, "admin")
    for name in ("branding", "age_pass_policy"):
        url, data = actions(world)[name]
        assert admin.post(url, data).status_code == 302, name
    url, data = actions(world)["session_redact"]
    assert admin.post(url, data).status_code == 302
    assert onboarded.tenant.sessions.get(pk=world["session_id"]).redacted_at is not None
