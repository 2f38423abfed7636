"""Password reset for tenant staff, through the email backend, from the request to signing in again."""

import os
import re
import subprocess
import sys
from pathlib import Path

from django.test import Client

from tests.factories import UserFactory


def test_staff_reset_a_forgotten_password_from_the_emailed_link(staff_user, mailoutbox):
    client = Client()
    assert b"Forgotten your password?" in client.get("/dashboard/login/").content

    response = client.post("/dashboard/password_reset/", {"email": "alice@acme.test"}, follow=True)

    assert response.redirect_chain[-1][0] == "/dashboard/password_reset/done/"
    assert len(mailoutbox) == 1 and mailoutbox[0].to == ["alice@acme.test"]
    assert mailoutbox[0].subject == "Reset your AgeVerify dashboard password"
    link = re.search(r"http://testserver(/dashboard/reset/\S+/)", mailoutbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    assert b"Choose a new password" in form_page.content
    done = client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": "a brand new passphrase 42", "new_password2": "a brand new passphrase 42"},
        follow=True,
    )
    assert done.redirect_chain[-1][0] == "/dashboard/reset/done/"
    signed_in = Client().post("/dashboard/login/", {"username": "alice", "password": "a brand new passphrase 42"})
    assert signed_in.status_code == 302 and signed_in["Location"] == "/dashboard/"
    assert client.get(link, follow=True).content.count(b"This link has expired") == 1  # used once


def test_a_reset_for_an_unknown_address_answers_the_same_and_sends_nothing(db, mailoutbox):
    response = Client().post("/dashboard/password_reset/", {"email": "nobody@nowhere.test"})

    assert response.status_code == 302 and response["Location"] == "/dashboard/password_reset/done/"
    assert mailoutbox == []


def test_the_dashboard_sends_no_reset_link_to_an_account_without_a_tenant(db, mailoutbox):
    UserFactory(username="operator", email="ops@ageverify.test", is_staff=True)

    Client().post("/dashboard/password_reset/", {"email": "ops@ageverify.test"})

    assert mailoutbox == []


def test_mismatched_new_passwords_get_a_clear_error(staff_user, mailoutbox):
    client = Client()
    client.post("/dashboard/password_reset/", {"email": "alice@acme.test"})
    link = re.search(r"http://testserver(/dashboard/reset/\S+/)", mailoutbox[0].body).group(1)
    form_url = client.get(link, follow=True).redirect_chain[-1][0]

    response = client.post(form_url, {"new_password1": "one long passphrase", "new_password2": "another one"})

    assert response.status_code == 200
    assert b"The two password fields" in response.content


def test_the_reset_link_points_at_public_base_url_whatever_host_the_request_named(staff_user, mailoutbox, settings):
    settings.PUBLIC_BASE_URL = "https://verify.ageverify.test"
    settings.ALLOWED_HOSTS = ["*"]  # a proxy that passes any Host header through

    Client().post("/dashboard/password_reset/", {"email": "alice@acme.test"}, HTTP_HOST="attacker.example")

    [mail] = mailoutbox
    assert "attacker.example" not in mail.body
    assert re.search(r"^https://verify\.ageverify\.test/dashboard/reset/\S+/$", mail.body, re.MULTILINE)


def _email_backend_with(env: dict) -> subprocess.CompletedProcess:
    code = "import django; django.setup(); from django.conf import settings; print(settings.EMAIL_BACKEND)"
    base = {key: value for key, value in os.environ.items() if key not in ("EMAIL_BACKEND", "DEBUG")}
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**base, **env},
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
    )


def test_with_debug_off_reset_mails_go_by_smtp_and_the_console_backend_is_refused():
    default = _email_backend_with({"DJANGO_SETTINGS_MODULE": "ageverify.settings", "DEBUG": "0"})
    console = _email_backend_with(
        {
            "DJANGO_SETTINGS_MODULE": "ageverify.settings",
            "DEBUG": "0",
            "EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend",
        }
    )
    debug = _email_backend_with({"DJANGO_SETTINGS_MODULE": "ageverify.settings", "DEBUG": "1"})

    assert default.stdout.strip() == "django.core.mail.backends.smtp.EmailBackend", default.stderr
    assert console.returncode != 0 and "writes password reset links to the log" in console.stderr
    assert debug.stdout.strip() == "django.core.mail.backends.console.EmailBackend", debug.stderr
