"""Dashboard fixtures: tenant staff (a user with a membership) and a second tenant to prove isolation."""

import pytest
from django.test import Client

from tenants.services import membership_add, tenant_create
from tests.factories import SETUP, UserFactory

PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """PBKDF2 costs ~0.5 s per user here; these tests are about access rules, not hash strength."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def staff_user(onboarded):
    user = UserFactory(username="alice", email="alice@acme.test")
    membership_add(tenant=onboarded.tenant, user=user, actor=SETUP)
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
    onboarded = tenant_create(name="Rival Inc", webhooks_enabled=True, actor=SETUP)
    user = UserFactory(username="mallory", email="mallory@rival.test")
    membership_add(tenant=onboarded.tenant, user=user, actor=SETUP)
    return onboarded
