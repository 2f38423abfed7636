"""A read on a reused database connection: one query, and no failed request when that connection has died.

The session read is its own connection check (core.hot_sql): a reused connection that PostgreSQL
dropped while it was idle (a restart, an idle timeout) is replaced and the read made again.
"""

import psycopg
import pytest
from django.db import connection

from sessions_api.models import VerificationSession
from tests.support.api_client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)


def _new_request_on_the_same_connection():
    # What Django does when a request starts with a connection kept from an earlier one (CONN_MAX_AGE).
    connection.health_check_done = False


def test_a_read_is_one_query(onboarded, django_assert_num_queries):
    client = ApiClient(onboarded.live_key)
    session_id = client.create_session()["sessionId"]
    client.get(f"/v1/sessions/{session_id}")  # the key is cached and marked used

    _new_request_on_the_same_connection()
    with django_assert_num_queries(1):
        response = client.get(f"/v1/sessions/{session_id}")

    assert response.status_code == 200


def _server_drops_the_connection() -> int:
    backend = connection.connection.info.backend_pid
    url = connection.settings_dict
    with psycopg.connect(
        host=url["HOST"],
        port=url["PORT"] or 5432,
        user=url["USER"],
        dbname=url["NAME"],
        password=url["PASSWORD"] or None,
        autocommit=True,
    ) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [backend])
    _new_request_on_the_same_connection()
    return backend


def test_a_read_on_a_connection_the_server_dropped_while_idle_still_answers(onboarded):
    client = ApiClient(onboarded.live_key)
    session_id = client.create_session()["sessionId"]
    client.get(f"/v1/sessions/{session_id}")
    backend = _server_drops_the_connection()

    response = client.get(f"/v1/sessions/{session_id}")

    assert response.status_code == 200, response.content
    assert response.json()["session"]["sessionId"] == session_id
    assert connection.connection.info.backend_pid != backend


def test_a_creation_on_a_connection_the_server_dropped_while_idle_creates_one_session(onboarded):
    client = ApiClient(onboarded.live_key)
    client.create_session()
    backend = _server_drops_the_connection()

    response = client.post("/v1/sessions", {"subject": "after-restart", "age_limit": 18})

    assert response.status_code == 201, response.content
    session_id = response.json()["session"]["sessionId"]
    assert client.get(f"/v1/sessions/{session_id}").json()["session"]["subject"] == "after-restart"
    assert VerificationSession.objects.filter(subject="after-restart").count() == 1
    assert connection.connection.info.backend_pid != backend
