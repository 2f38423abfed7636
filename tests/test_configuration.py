"""Configuration through the environment, as an operator meets it: a wrong value stops `manage.py` with
the variable's name and the form it wants; docs/configuration.md and deploy/env.example are what the
settings' reads say; the example environment alone starts the service with DEBUG off."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


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
    result = manage("check", env={"SECRET_KEY": "s3cret"})

    assert result.returncode == 1
    assert result.stderr.strip().startswith("Configuration error: FLOW_SIGNING_KEY must be set when DEBUG is off")


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


def test_the_example_environment_alone_passes_the_deployment_checks_with_debug_off():
    # As the units read it (systemd's EnvironmentFile), here through the shell the README's commands use.
    result = subprocess.run(
        ["sh", "-c", "set -a; . deploy/env.example; exec " + sys.executable + " manage.py check"],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
