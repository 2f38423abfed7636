"""Operators' admin (CONTRACT 6): tenants, keys, memberships, sessions render; key hashes never show; revoke works."""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from sessions_api.state_machine import Results, session_transition
from tenants.models import ApiKey, Membership
from tenants.services import membership_add
from tests.factories import SETUP
from tests.support.api_client import ApiClient


@pytest.fixture
def staffed(onboarded):
    membership_add(tenant=onboarded.tenant, user=get_user_model().objects.create(username="shop-staff"), actor=SETUP)
    return onboarded


@pytest.fixture
def finished_session(api):
    session_id = api.create_session()["sessionId"]
    session_transition(
        session_id=session_id,
        to="processing",
        cause="selfie",
        results=Results(
            liveness={"is_live": True, "liveness_score": 0.91},
            age_estimation={"estimated_age": 24.5, "age_confidence": 0.77},
        ),
    )
    session_transition(session_id=session_id, to="requires_doc", cause="unsure")
    session_transition(session_id=session_id, to="processing", cause="document")
    session_transition(
        session_id=session_id,
        to="approved",
        reason="document",
        cause="document valid",
        results=Results(document={"document_kind": "passport", "birthdate": date(2001, 2, 3), "true_age": 25}),
    )
    return session_id


def _pages(staffed, session_id):
    tenant = staffed.tenant
    key = ApiKey.objects.filter(tenant=tenant).first()
    membership = Membership.objects.get(tenant=tenant)
    return [
        "/admin/tenants/tenant/",
        f"/admin/tenants/tenant/{tenant.pk}/change/",
        f"/admin/tenants/tenant/{tenant.pk}/delete/",
        "/admin/tenants/apikey/",
        f"/admin/tenants/apikey/{key.pk}/change/",
        f"/admin/tenants/apikey/{key.pk}/history/",
        "/admin/tenants/apikey/?revoked_at__isempty=1",
        f"/admin/tenants/apikey/?q={key.prefix}",
        "/admin/tenants/membership/",
        f"/admin/tenants/membership/{membership.pk}/change/",
        "/admin/sessions_api/verificationsession/",
        f"/admin/sessions_api/verificationsession/{session_id}/change/",
        f"/admin/sessions_api/verificationsession/?q={session_id}",
    ]


def test_every_operator_page_renders_for_a_superuser(operator, staffed, finished_session):
    for page in _pages(staffed, finished_session):
        response = operator.get(page)
        assert response.status_code == 200, page


def test_no_admin_page_shows_a_key_hash_or_a_key(operator, staffed, finished_session):
    hashes = list(ApiKey.objects.values_list("key_hash", flat=True))

    for page in _pages(staffed, finished_session):
        html = operator.get(page).content.decode()
        for key_hash in hashes:
            assert key_hash not in html, page
        assert staffed.live_key not in html and staffed.test_key not in html, page
        assert "key_hash" not in html, page


def test_the_session_page_shows_results_read_only(operator, finished_session):
    html = operator.get(f"/admin/sessions_api/verificationsession/{finished_session}/change/").content.decode()

    for value in ("24.5", "0.77", "0.91", "passport", "25"):
        assert value in html, value
    assert 'name="age_estimation-0-estimated_age"' not in html
    assert 'name="status"' not in html
    assert 'name="_save"' not in html


def test_the_revoke_action_revokes_the_selected_keys_at_once(operator, api, onboarded):
    live = ApiKey.objects.get(tenant=onboarded.tenant, mode="live")
    test = ApiKey.objects.get(tenant=onboarded.tenant, mode="test")
    assert api.post("/v1/sessions", {"subject": "u", "age_limit": 18}).status_code == 201

    response = operator.post("/admin/tenants/apikey/", {"action": "revoke", "_selected_action": [live.pk]})

    assert response.status_code == 302
    live.refresh_from_db()
    test.refresh_from_db()
    assert live.revoked_at is not None and test.revoked_at is None
    assert api.post("/v1/sessions", {"subject": "u", "age_limit": 18}).status_code == 401
    assert ApiClient(onboarded.test_key).post("/v1/sessions", {"subject": "u", "age_limit": 18}).status_code == 201


def test_revoking_an_already_revoked_key_keeps_its_first_revocation_time(operator, onboarded):
    live = ApiKey.objects.get(tenant=onboarded.tenant, mode="live")
    operator.post("/admin/tenants/apikey/", {"action": "revoke", "_selected_action": [live.pk]})
    live.refresh_from_db()
    first = live.revoked_at

    operator.post("/admin/tenants/apikey/", {"action": "revoke", "_selected_action": [live.pk]})

    live.refresh_from_db()
    assert live.revoked_at == first


def test_keys_cannot_be_typed_in_by_hand(operator):
    assert operator.get("/admin/tenants/apikey/add/").status_code == 403


def test_the_disable_tenants_action_locks_their_keys_out(operator, api, onboarded):
    operator.post("/admin/tenants/tenant/", {"action": "disable_tenants", "_selected_action": [onboarded.tenant.pk]})

    assert api.post("/v1/sessions", {"subject": "u", "age_limit": 18}).status_code == 403


def test_sessions_cannot_be_added_or_edited_in_the_admin(operator, finished_session):
    assert operator.get("/admin/sessions_api/verificationsession/add/").status_code == 403
    response = operator.post(
        f"/admin/sessions_api/verificationsession/{finished_session}/change/", {"status": "denied"}
    )
    assert response.status_code == 403


def test_the_admin_is_closed_to_anonymous_visitors(db, staffed):
    response = Client().get("/admin/tenants/tenant/")

    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
