"""Fixtures for fault tests: private Redis and PostgreSQL servers, worker processes and an HTTPS receiver."""
import pytest

from tests.webhooks.receiver import WebhookReceiver, make_tls_files

from .processes import CeleryWorker, PrivatePostgres, PrivateRedis, test_database_url


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
def https_receiver(fault_tls, settings):
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_CA_BUNDLE = str(fault_tls.ca_bundle)
    server = WebhookReceiver(fault_tls)
    yield server
    server.close()


@pytest.fixture
def start_worker(transactional_db, fault_tls, tmp_path):
    """Start `celery worker -Q <queue>` processes pointed at a private broker (and the test database by default)."""
    workers = []

    def start(queue: str, broker_url: str, *, database_url: str | None = None, **options) -> CeleryWorker:
        options.setdefault("extra_env", {})
        options["extra_env"].setdefault("WEBHOOK_CA_BUNDLE", str(fault_tls.ca_bundle))
        worker = CeleryWorker(queue=queue, broker_url=broker_url, database_url=database_url or test_database_url(),
                              log_dir=tmp_path, **options)
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()
