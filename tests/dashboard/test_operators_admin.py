"""The operators' admin at /admin/: every model they run the service with is listed, filterable and searchable."""

import pytest
from django.contrib.admin.models import LogEntry

from sessions_api.models import VerificationSession
from tenants.audit import Actor
from tenants.models import AuditLogEntry, Tenant
from tenants.selectors import webhook_signing_secrets
from tenants.services import tenant_webhook_secret_rotate
from tests.factories import delivery_with_attempt
from webhooks.models import WebhookDelivery


@pytest.mark.parametrize(
    "path",
    [
        "/admin/tenants/tenant/?enabled__exact=1&q=Acme",
        "/admin/tenants/apikey/?mode__exact=live&q=Acme",
        "/admin/tenants/membership/?q=alice",
        "/admin/sessions_api/verificationsession/?status__exact=approved&q=user",
        "/admin/webhooks/webhookdelivery/?status__exact=pending&q=ses_",
        "/admin/tenants/auditlogentry/?action__exact=webhook_secret.rotated&q=alice",
    ],
)
def test_operator_lists_render_with_filters_and_search(operator, onboarded, staff_user, path):
    delivery_with_attempt(onboarded.tenant)
    tenant_webhook_secret_rotate(tenant=onboarded.tenant, actor=Actor(user=staff_user))

    response = operator.get(path)

    assert response.status_code == 200
    assert b"errornote" not in response.content


def test_operators_read_every_tenants_audit_log_but_cannot_change_it(operator, onboarded, staff_user):
    tenant_webhook_secret_rotate(tenant=onboarded.tenant, actor=Actor(user=staff_user, ip_address="192.0.2.9"))
    entry = AuditLogEntry.objects.get(action="webhook_secret.rotated")

    listing = operator.get("/admin/tenants/auditlogentry/").content.decode()
    detail = operator.get(f"/admin/tenants/auditlogentry/{entry.pk}/change/")

    assert "alice &lt;alice@acme.test&gt;" in listing and "Acme Games" in listing
    assert detail.status_code == 200 and b'name="_save"' not in detail.content
    assert operator.get("/admin/tenants/auditlogentry/add/").status_code == 403
    assert operator.post(f"/admin/tenants/auditlogentry/{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AuditLogEntry.objects.filter(pk=entry.pk).exists()


TENANT_ADD_FORM = {
    "name": "Added By Hand",
    "contact_email": "",
    "enabled": "on",
    "webhooks_enabled": "on",
    "session_ttl_seconds": "3600",
    "retention_days": "90",
    "age_extra_years": "0",
    "min_age_confidence": "0.5",
    **{
        f"{prefix}-{name}": value
        for prefix in ("api_keys", "memberships")
        for name, value in (
            ("TOTAL_FORMS", "0"),
            ("INITIAL_FORMS", "0"),
            ("MIN_NUM_FORMS", "0"),
            ("MAX_NUM_FORMS", "1000"),
        )
    },
}


def test_a_tenant_added_in_the_admin_gets_a_signing_secret(operator):
    response = operator.post("/admin/tenants/tenant/add/", TENANT_ADD_FORM)

    assert response.status_code == 302, response.content
    tenant = Tenant.objects.get(name="Added By Hand")
    assert tenant.webhook_secret.startswith("whsec_")
    assert webhook_signing_secrets(tenant) == [tenant.webhook_secret]


def test_the_tenant_page_shows_operators_only_a_hint_of_the_signing_secrets(operator, onboarded, staff_user):
    tenant = tenant_webhook_secret_rotate(tenant=onboarded.tenant, actor=Actor(user=staff_user))

    page = operator.get(f"/admin/tenants/tenant/{tenant.pk}/change/").content.decode()

    assert tenant.webhook_secret not in page and tenant.webhook_secret_previous not in page
    assert f"whsec_…{tenant.webhook_secret[-4:]}" in page
    assert f"whsec_…{tenant.webhook_secret_previous[-4:]}" in page
    for field in ("webhook_secret", "webhook_secret_previous"):  # nor can a list filter guess them
        assert operator.get("/admin/tenants/tenant/", {f"{field}__startswith": "whsec_"}).status_code == 400


def test_the_operators_actions_are_recorded_in_the_admin_log(operator, onboarded):
    _, delivery = delivery_with_attempt(onboarded.tenant)
    key = onboarded.tenant.api_keys.get(mode="live")

    for url, action, obj in [
        ("/admin/tenants/tenant/", "disable_webhooks", onboarded.tenant),
        ("/admin/tenants/tenant/", "disable_tenants", onboarded.tenant),
        ("/admin/tenants/apikey/", "revoke", key),
        ("/admin/webhooks/webhookdelivery/", "resend", delivery),
    ]:
        operator.post(url, {"action": action, "_selected_action": [obj.pk]})

    logged = [(entry.object_id, entry.get_change_message()) for entry in LogEntry.objects.order_by("pk")]
    assert logged == [
        (onboarded.tenant.pk, "Disabled webhook sending."),
        (onboarded.tenant.pk, "Disabled the tenant."),
        (str(key.pk), "Revoked the key."),
        (delivery.pk, "Re-sent the delivery."),
    ]
    assert {entry.user.username for entry in LogEntry.objects.all()} == {"operator"}


@pytest.mark.parametrize(
    "path",
    [
        "/admin/tenants/apikey/?key_hash__startswith={}",
        "/admin/tenants/apikey/?key_hash__regex=^{}",
        "/admin/tenants/apikey/?key_hash={}",
        "/admin/sessions_api/verificationsession/?token_hash__startswith={}",
        "/admin/sessions_api/verificationsession/?evidence_seal__startswith={}",
        "/admin/tenants/tenant/?test_webhook_secret__startswith={}",
        "/admin/auth/user/?password__startswith={}",
    ],
)
def test_no_admin_list_filters_on_a_secret_column_with_any_lookup(operator, api, path):
    api.create_session()
    # Whether the guess is right or wrong, the answer is the same refusal: no oracle.
    assert operator.get(path.format("0")).status_code == 400
    assert operator.get(path.format("a")).status_code == 400


@pytest.mark.parametrize("lookup", ["token_hash__startswith", "token_hash__gt", "token_hash"])
def test_the_dashboard_session_list_refuses_filters_on_the_token_hash(dashboard, api, lookup):
    api.create_session()
    assert dashboard.get("/dashboard/sessions/", {lookup: "0"}).status_code == 400
    assert dashboard.get("/dashboard/sessions/", {lookup: "f"}).status_code == 400


def test_neither_operators_nor_tenant_staff_see_the_evidence_a_session_keeps_sealed(operator, dashboard, api):
    session_id = api.create_session()["sessionId"]
    VerificationSession.objects.filter(pk=session_id).update(evidence_seal="sealed:v1:c2VhbGVkIGZhY2U=")

    for client, path in (
        (operator, f"/admin/sessions_api/verificationsession/{session_id}/change/"),
        (dashboard, f"/dashboard/sessions/{session_id}/"),
    ):
        page = client.get(path)
        assert page.status_code == 200 and "c2VhbGVkIGZhY2U" not in page.content.decode(), path


def test_the_read_only_session_and_delivery_pages_cannot_delete(operator, api, onboarded):
    session_id = api.create_session()["sessionId"]
    _, delivery = delivery_with_attempt(onboarded.tenant)
    pages = [("sessions_api/verificationsession", session_id), ("webhooks/webhookdelivery", delivery.pk)]

    for model, pk in pages:
        listing = operator.get(f"/admin/{model}/").content.decode()
        detail = operator.get(f"/admin/{model}/{pk}/change/").content.decode()
        assert 'value="delete_selected"' not in listing, model
        assert f"/{pk}/delete/" not in detail, model
        assert operator.post(f"/admin/{model}/{pk}/delete/", {"post": "yes"}).status_code == 403
        operator.post(f"/admin/{model}/", {"action": "delete_selected", "_selected_action": [pk], "post": "yes"})

    assert VerificationSession.objects.filter(pk=session_id).exists()
    assert WebhookDelivery.objects.filter(pk=delivery.pk).exists()


def test_the_operators_admin_names_age_passes_in_the_plural(operator):
    index = operator.get("/admin/").content.decode()
    listing = operator.get("/admin/age_passes/agepass/").content.decode()

    assert ">Age passes<" in index and ">Age pass policies<" in index
    assert "Age passs" not in index + listing and "Age passes" in listing
