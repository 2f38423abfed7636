"""The operator's per-tenant switch for unsigned wallet requests: off unless turned on in the admin."""

from tenants.models import Tenant
from tests.dashboard.test_operators_admin import TENANT_ADD_FORM


def test_a_new_tenant_sends_signed_requests_only(operator):
    assert operator.post("/admin/tenants/tenant/add/", TENANT_ADD_FORM).status_code == 302
    assert Tenant.objects.get(name="Added By Hand").digital_id_unsigned_requests is False


def test_the_operator_turns_unsigned_requests_on_for_testing(operator):
    form = {**TENANT_ADD_FORM, "digital_id_enabled": "on", "digital_id_unsigned_requests": "on"}
    assert operator.post("/admin/tenants/tenant/add/", form).status_code == 302
    assert Tenant.objects.get(name="Added By Hand").digital_id_unsigned_requests is True
    listed = operator.get("/admin/tenants/tenant/", {"digital_id_unsigned_requests__exact": "1"}).content.decode()
    assert "Added By Hand" in listed
