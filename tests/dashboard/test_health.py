"""Load balancer probes: /healthz says the process answers, /readyz that the database and the broker are reachable.

The machine's PostgreSQL and Redis stay up: outages are simulated by pointing this process at a closed port.
"""

import pytest
from django.test import Client

from tests.support.outages import broker_unreachable, database_unreachable


def test_healthz_answers_without_touching_the_database_or_the_broker(db):
    with broker_unreachable(), database_unreachable():
        response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_200_when_the_database_and_the_broker_answer(db):
    response = Client().get("/readyz")

    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"database": "ok", "broker": "ok"}}


def test_readyz_is_a_json_503_when_the_broker_is_unreachable(db):
    with broker_unreachable():
        response = Client().get("/readyz")

    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "unavailable"
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["broker"].startswith("unavailable")


@pytest.mark.django_db(transaction=True)
def test_readyz_is_a_json_503_when_the_database_is_unreachable():
    with database_unreachable():
        response = Client().get("/readyz")

    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["database"].startswith("unavailable") and body["checks"]["broker"] == "ok"
