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


@pytest.fixture
def age_policy_file(settings, tmp_path):
    """Put a variant of the committed age policy in force: `age_policy_file({18: 90.0, 12: None})`.

    Each entry replaces that limit's calibrated threshold (None: the face path is off for it). The
    policy is configuration, like any setting: the tests then go through the public surface as usual.
    """
    from sessions_api.age_assurance.policy import DEFAULT_POLICY_FILE

    in_force: dict[int, float | None] = {}

    def install(thresholds: dict[int, float | None]):
        in_force.update(thresholds)  # a test may refine what a fixture installed
        document = json.loads(DEFAULT_POLICY_FILE.read_text())
        for limit, threshold in in_force.items():
            document["limits"][str(limit)]["threshold"] = threshold
        # A new file each time: the service reads a policy file once (at start-up) and keeps it.
        path = tmp_path / f"age_policy_{len(list(tmp_path.glob('age_policy_*.json')))}.json"
        path.write_text(json.dumps(document))
        settings.AGE_POLICY_FILE = str(path)
        return path

    return install


@pytest.fixture
def face_path_on(age_policy_file):
    """The face path on at every age limit (threshold limit + 10), for tests of the selfie step itself.

    The committed policy may have it off for some limits (then the flow skips the selfie); tests of
    the selfie pages, liveness and analysis need it on, whatever the current network's calibration.
    """
    return age_policy_file({limit: float(limit + 10) for limit in range(10, 22)})
