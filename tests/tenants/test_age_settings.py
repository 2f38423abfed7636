"""Tenants' age settings in the operators' admin: stricter than the calibrated policy is kept, looser is refused."""

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from sessions_api.age_policy import age_policy
from tenants.models import Tenant
from tests.dashboard.test_operators_admin import TENANT_ADD_FORM


def add_tenant(operator, **age_settings):
    return operator.post("/admin/tenants/tenant/add/", {**TENANT_ADD_FORM, **age_settings})


def test_a_stricter_setting_is_saved(operator):
    response = add_tenant(operator, age_extra_years="3", min_age_confidence="0.9")

    assert response.status_code == 302, response.content
    tenant = Tenant.objects.get(name="Added By Hand")
    assert (tenant.age_extra_years, tenant.min_age_confidence) == (3, 0.9)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("age_extra_years", "-2", "stricter, never looser: extra years cannot be negative"),
        ("min_age_confidence", "0.3", "stricter, never looser: the minimum age confidence must be at least 0.5"),
    ],
)
def test_a_looser_setting_is_refused_with_a_clear_error(operator, field, value, message):
    response = add_tenant(operator, **{field: value})

    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Tenant.objects.filter(name="Added By Hand").exists()


def test_the_database_refuses_a_looser_setting_written_past_the_forms(onboarded):
    with pytest.raises(IntegrityError), transaction.atomic():
        Tenant.objects.filter(pk=onboarded.tenant.pk).update(min_age_confidence=0.2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Tenant.objects.filter(pk=onboarded.tenant.pk).update(age_extra_years=-1)


def test_operators_see_the_policy_in_force_read_only(operator, age_policy_file):
    age_policy_file({12: None, 18: 31.5})

    home = operator.get("/admin/").content.decode()
    page = operator.get("/admin/age-policy/").content.decode()

    assert 'href="/admin/age-policy/"' in home
    assert f'data-field="version">{age_policy().version}<' in page
    assert '<tr data-limit="18">' in page and ">31.5<" in page
    assert "off: document only" in page.split('<tr data-limit="12">')[1].split("</tr>")[0]
    assert "<form" not in page.split('id="content-main"')[1]


def test_the_policy_page_is_for_operators_only(client, db):
    client.force_login(get_user_model().objects.create_user("tenant-staff", "staff@acme.test", "a long password 42"))

    response = client.get("/admin/age-policy/")

    assert response.status_code == 302 and "/admin/login/" in response["Location"]
