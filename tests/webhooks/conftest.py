"""Fixtures for webhook tests: a real HTTPS receiver on loopback, trusted through WEBHOOK_CA_BUNDLE."""

import pytest

from sessions_api.state_machine import session_cancel
from tests.conftest import wait_until
from webhooks.models import WebhookDelivery

from .receiver import WebhookReceiver, make_tls_files

# Short retry waits keep the tests fast; the shape (8 attempts, the first immediate) is the real one.
FAST_SCHEDULE = [0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory):
    return make_tls_files(tmp_path_factory.mktemp("webhook-tls"))


@pytest.fixture(scope="session")
def _receiver_server(tls_files):
    server = WebhookReceiver(tls_files)
    yield server
    server.close()


@pytest.fixture
def receiver(_receiver_server, settings, tls_files):
    """The receiver, emptied, with settings that let the sender reach and trust it on loopback."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_CA_BUNDLE = str(tls_files.ca_bundle)
    settings.WEBHOOK_RETRY_SCHEDULE = FAST_SCHEDULE
    _receiver_server.reset()
    yield _receiver_server
    _receiver_server.reset()


def finalize_with_webhook(api, url: str, **fields) -> dict:
    """Create a session through the API with `notification_url=url`, then cancel it (a final transition)."""
    session = api.create_session(notification_url=url, **fields)
    session_cancel(session_id=session["sessionId"])
    return session


def delivery_of(session: dict) -> WebhookDelivery:
    return WebhookDelivery.objects.get(subject_ref=session["sessionId"])


def wait_for_status(session: dict, status: str, timeout: float = 10.0) -> WebhookDelivery:
    """The session's delivery once it reaches `status` (the worker records it just after the receiver answers)."""
    query = WebhookDelivery.objects.filter(subject_ref=session["sessionId"], status=status)
    return wait_until(query.first, timeout=timeout)
