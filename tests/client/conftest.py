"""The running service the client's tests talk to: one gunicorn for them all, a fresh tenant per test."""

import pytest

from ageverify_client import AgeVerify
from tenants.services import tenant_create
from tests.factories import SETUP
from tests.support.web_server import gunicorn


@pytest.fixture(scope="package")
def service(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), gunicorn(workers=1, extra_env={"WEBHOOK_ALLOW_PRIVATE_TARGETS": "1"}) as url:
        yield url


@pytest.fixture
def tenant(transactional_db):
    return tenant_create(name="Acme Games", webhooks_enabled=True, actor=SETUP)


@pytest.fixture
def sandbox(service, tenant):
    """The client as a partner configures it for the sandbox: test key and the test signing secret."""
    return AgeVerify(
        tenant.test_key, base_url=service, webhook_secret=tenant.tenant.test_webhook_secret, backoff_base=0.05
    )
