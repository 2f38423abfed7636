"""Dashboard fixtures: tenant staff (a user with a membership) and a second tenant to prove isolation."""
import pytest
from django.test import Client

from tenants.services import membership_add, tenant_create
from tests.factories import UserFactory

PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """PBKDF2 costs ~0.5 s per user here; these tests are about access rules, not hash strength."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff_user(onboarded):
    user = UserFactory(username="alice", email="alice@acme.test")
    membership_add(tenant=onboarded.tenant, user=user)
    return user


@pytest.fixture
def dashboard(staff_user):
    """A browser-like client signed in to the dashboard as `staff_user` of `onboarded.tenant`."""
    client = Client()
    client.force_login(staff_user)
    return client


@pytest.fixture
def rival(db):
    """Another tenant, with its own staff, keys and data, that `staff_user` must never see."""
    onboarded = tenant_create(name="Rival Inc", webhooks_enabled=True)
    user = UserFactory(username="mallory", email="mallory@rival.test")
    membership_add(tenant=onboarded.tenant, user=user)
    return onboarded


@pytest.fixture(scope="session")
def _webhook_receiver_server(tmp_path_factory):
    from tests.webhooks.receiver import WebhookReceiver, make_tls_files

    tls = make_tls_files(tmp_path_factory.mktemp("dashboard-webhook-tls"))
    server = WebhookReceiver(tls)
    server.tls = tls
    yield server
    server.close()


@pytest.fixture
def receiver(_webhook_receiver_server, settings):
    """A real HTTPS partner endpoint on loopback that the webhook sender is allowed to reach and trusts."""
    settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
    settings.WEBHOOK_CA_BUNDLE = str(_webhook_receiver_server.tls.ca_bundle)
    _webhook_receiver_server.reset()
    yield _webhook_receiver_server
    _webhook_receiver_server.reset()
