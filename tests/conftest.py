"""Shared fixtures: tenants with real keys, API clients, a Celery worker and the HTTPS webhook receiver."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.conf import settings

from core.redis_outage import redis_outage_forget
from tenants.services import tenant_create
from tests.support.api_client import ApiClient
from tests.support.openapi import assert_matches_openapi
from tests.support.receiver import WebhookReceiver, make_tls_files
from tests.support.research_data import research_data_dir, research_data_missing, research_data_required
from tests.support.workers import in_process_worker


def pytest_configure(config):
    """The flow's .mo files, compiled from the committed .po files where a catalog changed (as scripts/test does)."""
    script = Path(__file__).resolve().parents[1] / "scripts" / "compile_translations.py"
    subprocess.run([sys.executable, str(script)], check=True)


def pytest_runtest_setup(item):
    """A test marked `research_data("faces-dev")` is skipped without that data set, or fails where it is required."""
    for marker in item.iter_markers("research_data"):
        for name in marker.args:
            missing = research_data_missing(name)
            if missing is not None:
                if research_data_required():
                    pytest.fail(f"{missing} (AV_TEST_REQUIRE_RESEARCH_DATA=1: CI must have it)", pytrace=False)
                pytest.skip(missing)


def containers_asked(config) -> bool:
    """The container smoke test (marker `containers`: podman as root, about 1.8 GB of images) runs only when asked:
    `AV_TEST_CONTAINERS=1` (CI's .ci/run sets it), or a `-m` expression of the caller's own that names it."""
    return os.environ.get("AV_TEST_CONTAINERS", "") == "1" or "containers" in (config.option.markexpr or "")


def pytest_terminal_summary(terminalreporter, config):
    """Said at the end, where a reader of the counts looks (with -q as without, in one process as in two)."""
    left_out = [item for item in terminalreporter.stats.get("deselected", []) if is_container_test(item)]
    if left_out:
        terminalreporter.write_line(
            f"{len(left_out)} deselected: the container smoke test (podman as root, about 1.8 GB of images) runs only "
            "when asked: AV_TEST_CONTAINERS=1 (docs/testing.md)"
        )


def is_container_test(item) -> bool:
    return hasattr(item, "get_closest_marker") and item.get_closest_marker("containers") is not None


def pytest_collection_modifyitems(config, items):
    """The container smoke test left out unless asked (pytest counts it as deselected); then the longest modules
    first: the container smoke test's, then those reading the research data.

    With two processes (scripts/test) a module runs in one of them; started last, the container build ran
    alone for minutes after the other process had finished. Otherwise the order is kept.
    """
    if not containers_asked(config):
        left_out = [item for item in items if is_container_test(item)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if not is_container_test(item)]

    def rank(item) -> int:
        marks = {mark.name for mark in item.iter_markers()}  # the module's `pytestmark` too
        return 0 if "containers" in marks else 1 if "research_data" in marks else 2

    modules: dict[Path, int] = {}
    for item in items:
        modules[item.path] = min(modules.get(item.path, 2), rank(item))
    items.sort(key=lambda item: modules[item.path])


@pytest.fixture(scope="session")
def research_data() -> Path:
    """The folder of the research data sets; only for tests marked `research_data(...)`, which ensures it exists."""
    return research_data_dir()


@pytest.fixture(autouse=True)
def _clean_redis(request):
    """Each test of the service starts with an empty test Redis database (rate limits, broker, cache).

    Pure tests (the checks: no database) need no Redis at all.
    """
    uses_service = request.node.get_closest_marker("django_db") or {"db", "transactional_db"} & set(
        request.fixturenames
    )
    if uses_service and settings.REDIS_URL:
        redis.Redis.from_url(settings.REDIS_URL).flushdb()
        redis_outage_forget()  # a failure an earlier test met (or caused) is not this test's
    yield


@pytest.fixture(autouse=True)
def _answers_match_the_openapi_document(request, monkeypatch):
    """Every JSON answer under /v1/ that a test gets from Django's test client matches /v1/openapi.json.

    Not in a test marked `without_openapi_check` (it measures the instant right after an answer).
    """
    if request.node.get_closest_marker("without_openapi_check"):
        return
    from django.test import Client

    send = Client.request

    def checked(self, **kwargs):
        response = send(self, **kwargs)
        assert_matches_openapi(response)
        return response

    monkeypatch.setattr(Client, "request", checked)


@pytest.fixture
def operator(db):
    """A signed-in operator (superuser) of the /admin/ site: a test client of its own."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    # No password: force_login needs none, and hashing one costs most of a test's time.
    user = get_user_model().objects.create(username="operator", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    return client


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
    """A real Celery worker (solo pool) in a thread of the test process, on the real broker, queues emptied first."""
    from ageverify.celery import app

    app.control.purge()
    with in_process_worker() as worker:
        yield worker


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory):
    """The receiver's throwaway CA and certificate (`.ca_bundle` is what the sender must trust)."""
    return make_tls_files(tmp_path_factory.mktemp("webhook-tls"))


@pytest.fixture(scope="session")
def _receiver_server(tls_files):
    server = WebhookReceiver(tls_files)
    yield server
    server.close()


@pytest.fixture
def receiver(_receiver_server, settings, tls_files):
    """A real HTTPS partner endpoint on loopback, emptied, that the webhook sender may reach and trusts."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_CA_BUNDLE = str(tls_files.ca_bundle)
    _receiver_server.close_connections()  # each test starts with new connections: no handshake is skipped
    _receiver_server.reset()
    yield _receiver_server
    _receiver_server.reset()


@pytest.fixture
def age_policy_file(settings, tmp_path):
    """Put a variant of the committed age policy in force: `age_policy_file({18: 90.0, 12: None})`.

    Each entry replaces that limit's calibrated threshold (None: the face path is off for it) and takes
    the second opinion's veto off, unless given as a pair `(threshold, second_opinion_threshold)`. The
    policy is configuration, like any setting: the tests then go through the public surface as usual.
    """
    from sessions_api.age_policy import DEFAULT_POLICY_FILE

    in_force: dict[int, float | None] = {}

    def install(thresholds: dict[int, float | None]):
        in_force.update(thresholds)  # a test may refine what a fixture installed
        document = json.loads(DEFAULT_POLICY_FILE.read_text())
        for limit, threshold in in_force.items():
            threshold, veto = threshold if isinstance(threshold, tuple) else (threshold, None)
            document["limits"][str(limit)]["threshold"] = threshold
            document["limits"][str(limit)]["second_opinion_threshold"] = veto
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
