"""Fixtures for fault tests: private Redis and PostgreSQL servers, worker processes and an HTTPS receiver."""

import pytest

from core.redis_client import redis_request_client
from tests.support.database import current_database_url
from tests.support.outages import broker_at
from tests.support.receiver import WebhookReceiver, make_tls_files

from .processes import CeleryWorker, PrivatePostgres, PrivateRedis, WebServer


@pytest.fixture
def private_redis():
    server = PrivateRedis()
    yield server
    server.stop()


@pytest.fixture
def private_postgres(transactional_db):
    server = PrivatePostgres()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def fault_tls(tmp_path_factory):
    return make_tls_files(tmp_path_factory.mktemp("fault-tls"))


@pytest.fixture
def https_receivers(fault_tls, settings):
    """Make real HTTPS receivers on loopback that the workers (and this process) trust."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_CA_BUNDLE = str(fault_tls.ca_bundle)
    servers = []

    def make() -> WebhookReceiver:
        servers.append(WebhookReceiver(fault_tls))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def https_receiver(https_receivers):
    return https_receivers()


@pytest.fixture
def start_worker(transactional_db, fault_tls, tmp_path):
    """Start `celery worker -Q <queue>` processes pointed at a private broker (and the test database by default)."""
    workers = []

    def start(queue: str, broker_url: str, *, database_url: str | None = None, **options) -> CeleryWorker:
        options.setdefault("extra_env", {})
        options["extra_env"].setdefault("WEBHOOK_CA_BUNDLE", str(fault_tls.ca_bundle))
        worker = CeleryWorker(
            queue=queue,
            broker_url=broker_url,
            database_url=database_url or current_database_url(),
            log_dir=tmp_path,
            **options,
        )
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


@pytest.fixture
def start_web(transactional_db, tmp_path):
    """Start the web service (gunicorn) pointed at a private broker and the test database."""
    servers = []

    def start(redis_url: str, **options) -> WebServer:
        server = WebServer(redis_url=redis_url, database_url=current_database_url(), log_dir=tmp_path, **options)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def redis_at(settings):
    """Point this process's Redis (the drains' sets, rate limits) and its broker at one server."""

    def point(url: str):
        settings.REDIS_URL = url
        redis_request_client.cache_clear()
        return broker_at(url)

    yield point
    redis_request_client.cache_clear()
