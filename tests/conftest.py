"""Shared fixtures: tenants with real keys, and an API client that speaks JSON with a key."""
import json

import pytest
import redis
from django.conf import settings
from django.test import Client

from tenants.services import tenant_create


@pytest.fixture(autouse=True)
def _clean_redis():
    """Each test starts with an empty rate-limit store in the test Redis database."""
    if settings.REDIS_URL:
        redis.Redis.from_url(settings.REDIS_URL).flushdb()
    yield


class ApiClient:
    """Calls the partner API the way a partner backend does: JSON bodies, an X-API-Key header."""

    def __init__(self, api_key: str | None):
        self.api_key = api_key
        self.client = Client()

    def _headers(self, extra):
        headers = {}
        if self.api_key is not None:
            headers["X-API-Key"] = self.api_key
        headers.update(extra or {})
        return headers

    def post(self, path, body=None, *, raw: bytes | str | None = None, content_type="application/json", headers=None):
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self.client.post(path, data=data, content_type=content_type, headers=self._headers(headers))

    def get(self, path, headers=None):
        return self.client.get(path, headers=self._headers(headers))

    def create_session(self, **fields):
        body = {"subject": "user-42", "age_limit": 18, **fields}
        response = self.post("/v1/sessions", body)
        assert response.status_code == 201, response.content
        return response.json()["session"]


@pytest.fixture
def onboarded(db):
    """A tenant made by the onboarding service: `.tenant`, `.live_key`, `.test_key`."""
    return tenant_create(name="Acme Games", webhooks_enabled=True)


@pytest.fixture
def api(onboarded):
    return ApiClient(onboarded.live_key)


@pytest.fixture
def sandbox_api(onboarded):
    return ApiClient(onboarded.test_key)


@pytest.fixture
def anonymous_api(db):
    return ApiClient(None)


@pytest.fixture
def celery_worker(transactional_db):
    """A real Celery worker, in a thread of the test process, consuming from the real Redis broker.

    Tests that use it see committed data only (transactional_db), as a worker in production does.
    """
    from celery.contrib.testing.worker import start_worker

    from ageverify.celery import app

    app.control.purge()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10, loglevel="WARNING") as worker:
        yield worker
    # Workers reuse their database connection (CELERY_DB_REUSE_MAX); the stopped thread's one closes
    # only when collected, and an open one would block dropping the test database at the end.
    import gc

    gc.collect()


def wait_until(predicate, *, timeout: float = 10.0, interval: float = 0.05):
    """Poll `predicate` until it returns something truthy; fail the test after `timeout` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(interval)
