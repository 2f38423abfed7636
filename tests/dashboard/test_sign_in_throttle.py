"""Dashboard sign-in throttling: per-username and per-address lockouts, in the real Redis cache."""

import logging

import pytest
from django.test import Client

from tests.factories import PASSWORD, UserFactory
from tests.support.waiting import wait_until

LOCKED = b"Too many failed sign-in attempts"
ATTACKER = "203.0.113.7"
OFFICE = "198.51.100.20"


def sign_in(username, password, address=ATTACKER, client=None, **extra):
    client = client or Client()
    return client.post("/dashboard/login/", {"username": username, "password": password}, REMOTE_ADDR=address, **extra)


def fail(username, times, address=ATTACKER, **extra):
    for _ in range(times):
        response = sign_in(username, "wrong guess", address, **extra)
        assert response.status_code == 200 and LOCKED not in response.content


def test_five_wrong_passwords_lock_the_username_even_against_the_right_one(staff_user, caplog):
    fail("alice", 5)

    with caplog.at_level(logging.WARNING, logger="dashboard.sign_in_throttle"):
        response = sign_in("alice", PASSWORD)

    assert response.status_code == 429
    assert LOCKED in response.content and b"try again in 15 minutes" in response.content
    assert b'id="login-form"' in response.content  # the normal sign-in page, with its form
    assert "_auth_user_id" not in response.client.session
    assert "'alice'" in caplog.text and ATTACKER in caplog.text
    assert PASSWORD not in caplog.text and "wrong guess" not in caplog.text


def test_a_locked_unknown_username_looks_exactly_like_a_locked_real_one(staff_user):
    fail("alice", 5)
    fail("nobody-here", 5)

    real, unknown = sign_in("alice", PASSWORD), sign_in("nobody-here", PASSWORD)

    assert real.status_code == unknown.status_code == 429
    assert real.context["form"].errors == unknown.context["form"].errors


def test_another_username_from_another_address_is_unaffected(staff_user, rival):
    fail("alice", 5)

    response = sign_in("mallory", PASSWORD, address=OFFICE)

    assert response.status_code == 302 and response["Location"] == "/dashboard/"


def test_the_lock_lifts_when_the_window_ends(staff_user, settings):
    settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_USER = 2
    settings.DASHBOARD_LOGIN_WINDOW_SECONDS = 2
    fail("alice", 2)
    assert sign_in("alice", PASSWORD).status_code == 429

    # Attempts while locked do not extend the lock: it ends with the window opened by the first failure.
    wait_until(lambda: sign_in("alice", PASSWORD).status_code == 302, timeout=5, interval=0.2)


def test_a_successful_sign_in_clears_the_usernames_failures(staff_user):
    fail("alice", 4)
    assert sign_in("alice", PASSWORD).status_code == 302

    fail("alice", 4)
    assert sign_in("alice", PASSWORD).status_code == 302


def test_one_address_is_refused_after_too_many_failures_across_usernames(staff_user, settings):
    settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_IP = 8
    for number in range(8):
        fail(f"user{number}", 1)

    assert sign_in("alice", PASSWORD).status_code == 429
    assert sign_in("someone-new", "anything").status_code == 429
    assert sign_in("alice", PASSWORD, address=OFFICE).status_code == 302


def test_an_ipv6_client_cannot_escape_the_address_limit_by_changing_its_interface_id(staff_user, settings):
    settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_IP = 3
    for number in range(3):
        fail(f"user{number}", 1, address=f"2001:db8:1:2::{number + 1}")

    assert sign_in("alice", PASSWORD, address="2001:db8:1:2::99").status_code == 429
    assert sign_in("alice", PASSWORD, address="2001:db8:1:3::1").status_code == 302


def test_behind_a_trusted_proxy_the_forwarded_client_address_is_limited(staff_user, settings):
    settings.DASHBOARD_LOGIN_TRUSTED_PROXIES = 1
    settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_IP = 3
    proxy = "10.0.0.5"
    for number in range(3):
        # The attacker writes its own X-Forwarded-For entries; the proxy appends the address it really saw.
        fail(f"user{number}", 1, address=proxy, HTTP_X_FORWARDED_FOR=f"192.0.2.{number}, {ATTACKER}")

    assert sign_in("alice", PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR=ATTACKER).status_code == 429
    assert sign_in("alice", PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR=OFFICE).status_code == 302


def test_a_right_password_for_an_account_without_a_tenant_does_not_count_as_a_failure(db, settings):
    settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_IP = 2
    UserFactory(username="operator", is_staff=True)
    for _ in range(3):
        response = sign_in("operator", PASSWORD)
        assert response.status_code == 200 and b"not a member of any tenant" in response.content


def test_the_operators_admin_login_is_throttled_like_the_dashboards(db):
    UserFactory(username="operator", is_staff=True, is_superuser=True)
    for _ in range(5):
        assert (
            LOCKED
            not in Client()
            .post("/admin/login/", {"username": "operator", "password": "wrong guess"}, REMOTE_ADDR=ATTACKER)
            .content
        )

    response = Client().post("/admin/login/", {"username": "operator", "password": PASSWORD}, REMOTE_ADDR=ATTACKER)

    assert response.status_code == 200 and LOCKED in response.content
    elsewhere = Client().post("/admin/login/", {"username": "operator", "password": PASSWORD}, REMOTE_ADDR=OFFICE)
    assert LOCKED in elsewhere.content  # the username stays locked from any address


def test_password_reset_requests_from_one_address_are_limited(staff_user, settings, mailoutbox):
    settings.DASHBOARD_LOGIN_MAX_FAILURES_PER_IP = 3
    for _ in range(3):
        response = Client().post("/dashboard/password_reset/", {"email": "alice@acme.test"}, REMOTE_ADDR=ATTACKER)
        assert response.status_code == 302

    refused = Client().post("/dashboard/password_reset/", {"email": "alice@acme.test"}, REMOTE_ADDR=ATTACKER)
    elsewhere = Client().post("/dashboard/password_reset/", {"email": "alice@acme.test"}, REMOTE_ADDR=OFFICE)

    assert refused.status_code == 429 and b"Too many password reset requests" in refused.content
    assert elsewhere.status_code == 302
    assert len(mailoutbox) == 4


@pytest.fixture
def unreachable_cache(settings):
    # A real Redis client aimed at a port where nothing listens: connections are refused at once.
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
    }


def test_an_unreachable_cache_lets_sign_in_through_with_a_warning(staff_user, unreachable_cache, caplog):
    with caplog.at_level(logging.WARNING, logger="dashboard.sign_in_throttle"):
        fail("alice", 6)
        response = sign_in("alice", PASSWORD)

    assert response.status_code == 302
    assert "failing open" in caplog.text
