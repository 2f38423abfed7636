"""Who may enter the dashboard: tenant staff by membership; operators keep /admin/ to themselves."""

import re

from django.test import Client

from tests.factories import PASSWORD, UserFactory


def test_an_anonymous_visitor_is_sent_to_the_login_page():
    response = Client().get("/dashboard/sessions/")

    assert response.status_code == 302
    assert response["Location"].startswith("/dashboard/login/?next=/dashboard/sessions/")


def test_staff_sign_in_with_their_password_and_land_on_the_home_page(staff_user, onboarded):
    client = Client()
    login_page = client.get("/dashboard/login/")
    assert b"Sign in to your dashboard" in login_page.content

    response = client.post(
        "/dashboard/login/", {"username": "alice", "password": PASSWORD, "next": "/dashboard/"}, follow=True
    )

    assert response.redirect_chain[-1][0] == "/dashboard/"
    assert onboarded.tenant.id.encode() in response.content


def test_a_wrong_password_is_refused_with_a_message(staff_user):
    response = Client().post("/dashboard/login/", {"username": "alice", "password": "nope"})

    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content


def test_a_user_without_a_membership_cannot_sign_in_even_as_django_staff(db):
    UserFactory(username="operator", is_staff=True, is_superuser=True)

    response = Client().post("/dashboard/login/", {"username": "operator", "password": PASSWORD})

    assert response.status_code == 200
    assert b"not a member of any tenant" in response.content
    assert "_auth_user_id" not in response.client.session


def test_an_operator_signed_in_to_the_admin_is_not_let_into_the_dashboard(db):
    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(operator)

    assert client.get("/admin/").status_code == 200
    assert client.get("/dashboard/").status_code == 302


def test_tenant_staff_are_not_let_into_the_operators_admin(dashboard):
    response = dashboard.get("/admin/tenants/tenant/")

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_a_deactivated_user_loses_access_on_the_next_request(dashboard, staff_user):
    staff_user.is_active = False
    staff_user.save()

    assert dashboard.get("/dashboard/").status_code == 302


def test_a_removed_membership_loses_access_on_the_next_request(dashboard, staff_user):
    staff_user.tenant_memberships.all().delete()

    assert dashboard.get("/dashboard/").status_code == 302


def test_logging_out_takes_a_post_and_ends_the_session(dashboard):
    assert dashboard.get("/dashboard/logout/").status_code == 405

    response = dashboard.post("/dashboard/logout/")

    assert response.status_code == 200
    assert b"You are signed out" in response.content
    assert dashboard.get("/dashboard/").status_code == 302


def test_every_dashboard_form_carries_a_csrf_token(dashboard):
    page = dashboard.get("/dashboard/").content.decode()

    forms = re.findall(r"<form[^>]*method=\"post\".*?</form>", page, flags=re.S)
    assert len(forms) >= 2  # generate key, log out
    assert all("csrfmiddlewaretoken" in form for form in forms)


def test_a_post_without_the_csrf_token_is_refused(staff_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)

    response = client.post("/dashboard/keys/generate/", {"mode": "live"})

    assert response.status_code == 403
    assert staff_user.tenant_memberships.get().tenant.api_keys.count() == 2  # the two onboarding keys only


def test_an_unknown_dashboard_address_is_a_404(dashboard):
    assert dashboard.get("/dashboard/no-such-page/").status_code == 404


def test_staff_change_their_password_from_the_dashboard(dashboard):
    new = "another long passphrase 7"
    response = dashboard.post(
        "/dashboard/password_change/",
        {"old_password": PASSWORD, "new_password1": new, "new_password2": new},
        follow=True,
    )

    assert response.redirect_chain[-1][0] == "/dashboard/password_change/done/"
    assert Client().login(username="alice", password="another long passphrase 7")
