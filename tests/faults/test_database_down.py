"""Database unreachable (CONTRACT 2): the API answers 503 service_unavailable with Retry-After, never a 500 page.

The machine's PostgreSQL is shared and stays up: this test points its own connection at a closed port
(127.0.0.1:1), which fails the way a database that went away does, then restores it.
"""

import logging

import pytest
from django.db import connection

from sessions_api.models import VerificationSession, new_session_id
from tests.support.api_client import ApiClient
from tests.support.assertions import assert_problem
from tests.support.flow import start_path
from tests.support.outages import database_unreachable

pytestmark = pytest.mark.django_db(transaction=True)


def test_creating_a_session_with_the_database_down_is_503_with_retry_after(onboarded, caplog):
    client = ApiClient(onboarded.live_key)

    with database_unreachable(), caplog.at_level(logging.WARNING):
        response = client.post("/v1/sessions", {"subject": "user-42", "age_limit": 18})

    assert_problem(response, 503, "service_unavailable")
    assert int(response["Retry-After"]) > 0
    assert "backend unavailable" in caplog.text


def test_reading_a_session_with_the_database_down_is_503_with_retry_after(onboarded):
    client = ApiClient(onboarded.live_key)
    session_id = client.create_session()["sessionId"]

    with database_unreachable():
        response = client.get(f"/v1/sessions/{session_id}")

    assert_problem(response, 503, "service_unavailable")
    assert int(response["Retry-After"]) > 0


def test_an_idempotent_post_with_the_database_down_is_503(onboarded):
    client = ApiClient(onboarded.live_key)

    with database_unreachable():
        response = client.post("/v1/sessions", {"subject": "u", "age_limit": 18}, headers={"Idempotency-Key": "k1"})

    assert_problem(response, 503, "service_unavailable")


def test_the_api_answers_again_once_the_database_is_back(onboarded):
    client = ApiClient(onboarded.live_key)
    with database_unreachable():
        assert client.get(f"/v1/sessions/{new_session_id()}").status_code == 503

    session = client.create_session()

    assert VerificationSession.objects.filter(pk=session["sessionId"]).exists()
    assert client.get(f"/v1/sessions/{session['sessionId']}").status_code == 200


def _post_while_the_database_goes_away_mid_request(client, body, headers=None):
    """Authentication succeeds on a live connection; the write that follows finds the server gone."""
    from sessions_api.api import views as api_module

    real_create = api_module.session_create

    def create_after_outage(**kwargs):
        connection.close()
        connection.settings_dict.update(HOST="127.0.0.1", PORT="1")
        return real_create(**kwargs)

    saved = dict(connection.settings_dict)
    api_module.session_create = create_after_outage
    try:
        return client.post("/v1/sessions", body, headers=headers or {})
    finally:
        api_module.session_create = real_create
        connection.close()
        connection.settings_dict.update(saved)


def test_the_database_going_away_mid_request_is_503(onboarded):
    client = ApiClient(onboarded.live_key)

    response = _post_while_the_database_goes_away_mid_request(client, {"subject": "user-42", "age_limit": 18})

    assert_problem(response, 503, "service_unavailable")
    assert not VerificationSession.objects.exists()


def test_the_pipeline_status_with_the_database_down_is_a_short_503_never_a_traceback(settings):
    from django.test import Client

    settings.PIPELINE_STATUS_TOKEN = "ops-token"
    client = Client(raise_request_exception=False)

    with database_unreachable():
        response = client.get("/ops/pipeline", headers={"Authorization": "Bearer ops-token"})

    assert response.status_code == 503 and response["Content-Type"] == "application/json"
    assert response.json() == {"status": "unavailable", "detail": "the database is unreachable"}
    assert int(response["Retry-After"]) > 0 and response["Cache-Control"] == "no-store"


def test_an_idempotency_key_whose_request_died_with_the_database_is_free_again_at_once(onboarded):
    body, headers = {"subject": "user-42", "age_limit": 18}, {"Idempotency-Key": "order-7"}
    client = ApiClient(onboarded.live_key)
    died = _post_while_the_database_goes_away_mid_request(client, body, headers)
    assert_problem(died, 503, "service_unavailable")

    retried = client.post("/v1/sessions", body, headers=headers)  # the database is back: the partner retries

    assert retried.status_code == 201, retried.content  # not 409 idempotency_key_in_use for a minute
    assert VerificationSession.objects.count() == 1
    assert client.post("/v1/sessions", body, headers=headers).json() == retried.json()  # and now it replays


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_wallet_reaching_the_service_with_the_database_down_gets_temporarily_unavailable(method):
    from django.test import Client

    client = Client(raise_request_exception=False)
    path = "/wallet/openid4vp/request/dcr_x" if method == "get" else "/wallet/openid4vp/response/dcr_x"

    with database_unreachable():
        if method == "get":
            response = client.get(path)
        else:
            response = client.post(path, "response=a.b.c.d.e", content_type="application/x-www-form-urlencoded")

    assert (response.status_code, response.json()) == (503, {"error": "temporarily_unavailable"})
    assert int(response["Retry-After"]) > 0 and response["Cache-Control"] == "no-store"


def test_a_user_opening_the_flow_with_the_database_down_sees_the_outage_page(onboarded, caplog):
    from django.test import Client

    link = start_path(ApiClient(onboarded.live_key).create_session()["verificationUrl"])
    browser = Client(raise_request_exception=False)

    with database_unreachable(), caplog.at_level(logging.WARNING):
        response = browser.get(link)

    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert "Temporarily unavailable" in response.content.decode()
    assert "flow: backend unavailable" in caplog.text
    assert browser.get(link).status_code == 303  # the database is back: the same link opens the flow
