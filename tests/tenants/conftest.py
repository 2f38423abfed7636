"""Fixtures of the tenants tests: a signed-in operator of the /admin/ site."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client


@pytest.fixture
def operator(db):
    # No password: force_login needs none, and hashing one costs most of a test's time.
    user = get_user_model().objects.create(username="operator", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(user)
    return client
