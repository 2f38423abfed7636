"""Configuration through the environment, as an operator meets it: a wrong value stops `manage.py` with
the variable's name and the form it wants; docs/configuration.md and deploy/env.example are what the
settings' reads say; the example environment alone starts the service with DEBUG off."""

import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.containers.stack import compose_settings

REPO = Path(__file__).resolve().parents[1]
STRONG = secrets.token_hex(32)  # what the examples tell an operator to generate (`openssl rand -hex 32`)
PRODUCTION = {"DEBUG": "0", "SECRET_KEY": STRONG, "FLOW_SIGNING_KEY": secrets.token_hex(32)}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    # Only what the test gives: no variable of the caller's environment may decide the outcome.
    base = {"PATH": "/usr/bin:/bin", "HOME": str(REPO)}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env={**base, **env}, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "name, value, form",
    [
        ("API_RATE_LIMIT_BURST", "abc", "an integer of at least 1"),
        ("API_RATE_LIMIT_PER_SECOND", "-5", "an integer of at least 1"),
        ("WEBHOOK_TOTAL_TIMEOUT", "ten", "a number such as 0.5, at least 0"),
        ("SESSION_CREATE_WAIT_FOR_DISK", "maybe", "1 or 0 (also true/false, yes/no, on/off)"),
        ("REDIS_URL", "localhost:6379", "a URL starting redis:// or rediss:// or unix://"),
        ("DATABASE_URL", "postgress://db/ageverify", "a database URL such as postgres://user@host:5432/ageverify"),
        ("LOG_LEVEL", "verbose", "one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    ],
)
def test_a_value_of_the_wrong_form_stops_manage_py_naming_the_variable_and_the_form(name, value, form):
    result = manage("check", env={"DEBUG": "1", name: value})

    assert result.returncode == 1
    assert result.stderr.strip() == f"Configuration error: {name} must be {form}; it is {value!r}"


def test_a_missing_secret_with_debug_off_is_named():
    result = manage("check", env={"SECRET_KEY": STRONG})

    assert result.returncode == 1
    assert result.stderr.strip().startswith("Configuration error: FLOW_SIGNING_KEY must be set when DEBUG is off")


def test_the_service_with_debug_off_and_a_placeholder_secret_key_exits_naming_it():
    result = manage("check", env={**PRODUCTION, "SECRET_KEY": "change-me"})

    assert result.returncode == 1
    assert result.stderr.strip() == (
        "Configuration error: SECRET_KEY is the placeholder 'change-me' of an example environment: with DEBUG off it "
        "must be a long random value of its own (`openssl rand -hex 32`)"
    )


@pytest.mark.parametrize(
    "name, value, named",
    [
        ("SECRET_KEY", "change-me-long-random", "SECRET_KEY"),  # deploy/env.example's
        ("FLOW_SIGNING_KEY", "change-me", "FLOW_SIGNING_KEY"),  # deploy/compose.env.example's
        ("PIPELINE_STATUS_TOKEN", "change-me", "PIPELINE_STATUS_TOKEN"),
        ("EMAIL_HOST_PASSWORD", "CHANGEME", "EMAIL_HOST_PASSWORD"),
        ("FLOWER_BASIC_AUTH", "ops:change-me", "the password in FLOWER_BASIC_AUTH"),
        ("DATABASE_URL", "postgres://ageverify:change-me@postgres:5432/ageverify", "the password in DATABASE_URL"),
        ("REDIS_URL", "redis://:change-me@redis:6379/0", "the password in REDIS_URL"),
    ],
)
def test_with_debug_off_every_secret_left_as_a_placeholder_stops_the_service_naming_it(name, value, named):
    result = manage("check", env={**PRODUCTION, name: value})

    assert result.returncode == 1
    assert result.stderr.strip().startswith(f"Configuration error: {named} is the placeholder ")


@pytest.mark.parametrize("name", ["SECRET_KEY", "FLOW_SIGNING_KEY", "PIPELINE_STATUS_TOKEN"])
def test_with_debug_off_a_short_secret_stops_the_service_naming_it_without_showing_it(name):
    result = manage("check", env={**PRODUCTION, name: "a-real-but-short-secret"})

    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"Configuration error: {name} is 23 characters long: with DEBUG off it must be at least 32 random characters "
        "(`openssl rand -hex 32`)"
    )


def test_in_development_placeholders_and_short_secrets_are_taken():
    result = manage(
        "check", env={"DEBUG": "1", "SECRET_KEY": "change-me", "FLOW_SIGNING_KEY": "short", "EMAIL_HOST_PASSWORD": "x"}
    )

    assert result.returncode == 0, result.stderr


def test_good_values_are_read_as_their_type_and_empty_ones_count_as_unset():
    shown = manage(
        "shell",
        "--no-imports",
        "-c",
        "from django.conf import settings as s; "
        "print(s.API_RATE_LIMIT_BURST, s.WEBHOOK_TOTAL_TIMEOUT, s.SESSION_CREATE_WAIT_FOR_DISK, s.ALLOWED_HOSTS, "
        "s.API_RATE_LIMIT_PER_SECOND)",
        env={
            "DEBUG": "1",
            "API_RATE_LIMIT_BURST": " 7 ",
            "WEBHOOK_TOTAL_TIMEOUT": "2.5",
            "SESSION_CREATE_WAIT_FOR_DISK": "yes",
            "ALLOWED_HOSTS": "a.example, b.example,",
            "API_RATE_LIMIT_PER_SECOND": "",
        },
    )

    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "7 2.5 True ['a.example', 'b.example'] 100"


def test_the_generated_pages_and_the_example_environment_are_what_their_sources_say():
    result = subprocess.run(
        [sys.executable, "scripts/reference_docs.py", "--check"], cwd=REPO, capture_output=True, text=True
    )

    assert result.returncode == 0, result.stdout + result.stderr


def _documented() -> dict[str, str]:
    """{variable: its row} of docs/configuration.md's tables."""
    rows = re.findall(r"^\| `([A-Z][A-Z0-9_]+)` \|(.*)$", (REPO / "docs" / "configuration.md").read_text(), re.M)
    return dict(rows)


def _read_in_code() -> set[str]:
    """Every name the settings and gunicorn.conf.py give the reader (its typed methods take the name first)."""
    source = (REPO / "ageverify" / "settings.py").read_text() + (REPO / "gunicorn.conf.py").read_text()
    return set(re.findall(r"ENV\.\w+\(\s*\"([A-Z][A-Z0-9_]+)\"", source))


def test_every_variable_read_is_documented_and_every_production_one_is_in_the_example_environment():
    documented = _documented()
    example = (REPO / "deploy" / "env.example").read_text()
    in_example = set(re.findall(r"^(?:# )?([A-Z][A-Z0-9_]+)=", example, re.M))
    development = {name for name, row in documented.items() if "*development*" in row}

    assert _read_in_code() == set(documented)
    assert in_example == set(documented) - development
    assert {"DEBUG", "CELERY_TASK_ALWAYS_EAGER", "WEBHOOK_ALLOW_PRIVATE_TARGETS"} <= development
    for name in ("SECRET_KEY", "FLOW_SIGNING_KEY", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS", "PUBLIC_BASE_URL"):
        assert re.search(rf"^{name}=\S", example, re.M), f"{name} is not set in deploy/env.example"


def test_the_settings_read_the_environment_only_through_the_reader():
    for path in (REPO / "ageverify" / "settings.py", REPO / "gunicorn.conf.py"):
        assert "os.environ" not in path.read_text(), path


def test_the_example_environment_with_its_placeholders_replaced_passes_the_deployment_checks_with_debug_off():
    # As the units read it (systemd's EnvironmentFile), here through the shell the README's commands use.
    def check(example: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["sh", "-c", "set -a; . /dev/stdin; exec " + sys.executable + " manage.py check"],
            input=example,
            cwd=REPO,
            env={"PATH": "/usr/bin:/bin", "HOME": str(REPO)},
            capture_output=True,
            text=True,
            timeout=120,
        )

    example = (REPO / "deploy" / "env.example").read_text()
    as_shipped = check(example)
    replaced = check(re.sub(r"change-me[\w-]*", lambda _: secrets.token_hex(32), example))

    assert as_shipped.returncode == 1
    assert as_shipped.stderr.startswith("Configuration error: SECRET_KEY is the placeholder 'change-me'")
    assert replaced.returncode == 0, replaced.stderr
    assert "System check identified no issues" in replaced.stdout


def test_the_compose_environment_as_the_container_smoke_test_fills_it_passes_and_as_shipped_does_not():
    filled, shipped = compose_settings(), compose_settings(filled=False)
    database = "postgres://ageverify:{}@postgres:5432/ageverify"  # as compose.yaml builds it

    def check(settings: dict[str, str]) -> subprocess.CompletedProcess:
        return manage("check", env={**settings, "DATABASE_URL": database.format(settings["POSTGRES_PASSWORD"])})

    result = check(filled)
    assert result.returncode == 0, result.stderr
    assert check(shipped).stderr.startswith("Configuration error: SECRET_KEY is the placeholder")
    only_the_database = check({**filled, "POSTGRES_PASSWORD": "change-me"})
    assert only_the_database.stderr.startswith("Configuration error: the password in DATABASE_URL is the placeholder")
