"""The operators' admin at /admin/: every model they run the service with is listed, filterable and searchable."""
import pytest
from django.contrib.auth import get_user_model

from dashboard.models import AuditLogEntry
from dashboard.services import Actor, dashboard_webhook_secret_rotate
from tests.dashboard.builders import delivery_with_attempt


@pytest.fixture
def operator(client, db):
    user = get_user_model().objects.create_superuser("operator", "ops@ageverify.test", "correct horse battery staple")
    client.force_login(user)
    return client


@pytest.mark.parametrize("path", [
    "/admin/tenants/tenant/?enabled__exact=1&q=Acme",
    "/admin/tenants/apikey/?mode__exact=live&q=Acme",
    "/admin/tenants/membership/?q=alice",
    "/admin/sessions_api/verificationsession/?status__exact=approved&q=user",
    "/admin/webhooks/webhookdelivery/?status__exact=pending&q=ses_",
    "/admin/dashboard/auditlogentry/?action__exact=webhook_secret.rotated&q=alice",
])
def test_operator_lists_render_with_filters_and_search(operator, onboarded, staff_user, path):
    delivery_with_attempt(onboarded.tenant)
    dashboard_webhook_secret_rotate(tenant=onboarded.tenant, actor=Actor(user=staff_user))

    response = operator.get(path)

    assert response.status_code == 200
    assert b"errornote" not in response.content


def test_operators_read_every_tenants_audit_log_but_cannot_change_it(operator, onboarded, staff_user):
    dashboard_webhook_secret_rotate(tenant=onboarded.tenant, actor=Actor(user=staff_user, ip_address="192.0.2.9"))
    entry = AuditLogEntry.objects.get()

    listing = operator.get("/admin/dashboard/auditlogentry/").content.decode()
    detail = operator.get(f"/admin/dashboard/auditlogentry/{entry.pk}/change/")

    assert "alice &lt;alice@acme.test&gt;" in listing and "Acme Games" in listing
    assert detail.status_code == 200 and b'name="_save"' not in detail.content
    assert operator.get("/admin/dashboard/auditlogentry/add/").status_code == 403
    assert operator.post(f"/admin/dashboard/auditlogentry/{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AuditLogEntry.objects.filter(pk=entry.pk).exists()
