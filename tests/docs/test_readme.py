"""The docs test: every code block of the README and of every page of docs/ (the documentation site) is run
as printed (against a live server, the test database and a real webhook worker), and its printed answers
are held to the real ones; the few blocks that cannot run here say why below. When the docs drift, this
test fails. A new page's blocks join RUN (with the test that runs them) or NOT_RUN (with why)."""

import io
import json
import os
import queue
import re
import secrets
import signal
import socket
import subprocess
import threading
from contextlib import contextmanager
from types import SimpleNamespace

import pytest
from django.core.management import call_command
from django.db import connection as db_connection
from standardwebhooks.webhooks import WebhookVerificationError

from sessions_api.models import VerificationSession
from sessions_api.sandbox import sandbox_advance
from tests.factories import finished_session
from tests.support.database import current_database_url
from tests.support.readme import (
    REPO,
    answer_mismatches,
    doc_blocks,
    printed_pairs,
    python_blocks,
    run,
    run_curl,
)
from tests.support.waiting import wait_until
from webhooks.delivery import webhook_delivery_attempt
from webhooks.models import WebhookDelivery

PLACEHOLDER_SESSION = "ses_01K..."
DEMO_URL = "http://localhost:8000"
RECEIVER_PORT = "8443"

# First command (or first line) of a block -> the test that runs it, or why it is not run here.
RUN = {
    "KEY=av_test_...": "test_the_walk_through_works_as_printed_with_either_key",
    'curl -s "http://localhost:8000/v1/sessions?': "test_the_walk_through_works_as_printed_with_either_key",
    "DEBUG=1 .venv/bin/python manage.py create_tenant": "test_the_onboarding_commands_work_as_printed",
    "DEBUG=1 .venv/bin/python manage.py api_key_generate": "test_the_key_and_secret_commands_work_as_printed",
    "DEBUG=1 .venv/bin/python manage.py webhook_receiver": "test_the_local_webhook_recipe_works_as_printed",
    "from standardwebhooks.webhooks import Webhook": "test_the_python_snippets_run_as_printed",
    "from ageverify_client import": "test_the_python_snippets_run_as_printed",
    "try:": "test_the_python_snippets_run_as_printed",
    "DEBUG=1 API_RATE_LIMIT_BURST=abc": "test_a_wrong_setting_is_refused_as_printed",
    ".venv/bin/python scripts/licences.py": "test_the_licence_verdict_is_as_printed",
    ".venv/bin/mkdocs build --strict": "test_the_site_builds_strictly_as_printed",
}
NOT_RUN = {
    # docs/containers.md: tests/containers/stack.py reads and runs the compose commands of that page as printed.
    "docker build": "tests/containers (marker containers) builds the image with podman",
    'eval "$(sudo scripts/containers-host)"': "prepares podman as root: tests/containers runs scripts/containers-host",
    "cp deploy/compose.env.example .env": "tests/containers writes the env file from deploy/compose.env.example",
    "podman-compose down": "tests/containers/stack.py runs this page's compose commands",
    "export COMPOSE_FILE=compose.yaml:compose.scale.yaml": "tests/containers runs the scale-out file",
    "git pull": "an operator's upgrade of a running stack",
    "podman-compose exec -T postgres pg_dump": "a backup of a running stack's database",
    "podman-compose exec -T postgres pg_restore": "a restore into a running stack's database",
    "scripts/demo": (
        "serves until stopped; its keys: tests/tenants/test_demo_seed.py, its trust bundle: the recipe test; "
        "scripts/test is what runs this test"
    ),
    "gunicorn ageverify.wsgi": "production processes: tests/test_deploy.py checks the units that run them",
    "sudo cp deploy/": "installs systemd units as root",
    ".venv/bin/python bench/api.py": "benchmarks, run by hand on a quiet machine",
    ".venv/bin/python bench/pad.py": "a benchmark run by hand (minutes of face analysis); "
    "tests/sessions_api/test_evaluate_pad.py runs the same evaluation on a small capture set",
    "DEBUG=1 .venv/bin/python manage.py calibrate_pad": "needs the research data (minutes of face analysis); "
    "tests/sessions_api/test_calibrate_pad.py runs the command on a small set",
    ".venv/bin/python tools/pad-recorder/recorder.py": "serves until stopped and needs a person in front of a "
    "camera; tests/tools/test_pad_recorder.py drives the tool over HTTP",
    ".venv/bin/python manage.py evaluate_pad": "needs a capture set (DIR); tests/sessions_api/test_evaluate_pad.py "
    "runs the command on one",
    "DEBUG=1 .venv/bin/python manage.py flow_messages": "rewrites the .po catalogues (translators' workflow); "
    "tests/flow/test_languages.py runs its --check",
    "<!-- Content-Security-Policy": "a partner's page: tests/e2e/test_sdk.py loads the SDK so in Chromium",
    "// checkout.js": "a partner's script: tests/e2e/test_sdk.py makes these calls in Chromium",
    "bash scripts/test": "runs the test suite itself (docs/testing.md), of which this test is a part",
    "DATABASE_URL=postgres://postgres@127.0.0.1:5432/ageverify_mine": "runs the test suite itself, on other "
    "databases (docs/testing.md)",
    '"agePass": {': "an excerpt of a read: tests/e2e/test_age_pass.py holds a real one to this shape",
    ".venv/bin/python manage.py revoke_age_passes": "tests/age_passes/test_operations.py runs the command and "
    "reads the line it prints",
    "bash scripts/test tests/webhooks": "runs the test suite itself (docs/testing.md): scripts/test is what runs "
    "this test",
    "DATABASE_URL=postgres://postgres@127.0.0.1:5432/": "runs the test suite against another database "
    "(docs/testing.md): scripts/test is what runs this test",
    "cd clients/node && npm ci": "tests/client/test_node_client.py installs, builds and tests the Node client so",
    'import { AgeVerify } from "@ageverify/client"': "the Node client's calls: clients/node/test/service.test.mjs "
    "makes them against the service (tests/client/test_node_client.py)",
    'app.post("/hooks/ageverify"': "a partner's Express route: clients/node/test/service.test.mjs verifies a "
    "delivered webhook and a test event with the same call",
    "await av.sandbox.advance(": "the Node client's sandbox calls: clients/node/test/service.test.mjs makes "
    "them against the service and reads the sessions back",
}


def blocks_starting(prefix):
    found = [block for block in doc_blocks() if block.first_command.startswith(prefix)]
    assert found, f"no block of the docs starts with {prefix!r}"
    return found[0]


def test_every_block_of_every_page_is_run_here_or_says_why_not():
    for block in doc_blocks():
        known = [prefix for prefix in (*RUN, *NOT_RUN) if block.first_command.startswith(prefix)]
        assert known, (
            f"{block.page}: {block.language} block under {block.heading!r} ({block.first_command[:60]!r}) "
            "is neither run nor excused"
        )
    assert set(RUN.values()) <= set(globals()), "RUN names a test this module does not have"


def matches_printed(printed: str, line: str) -> bool:
    """`line` as the docs print it, where "..." stands for anything."""
    return re.fullmatch(".+".join(re.escape(part) for part in printed.split("...")), line) is not None


def test_a_wrong_setting_is_refused_as_printed(shell_env):
    (step,) = blocks_starting("DEBUG=1 API_RATE_LIMIT_BURST=abc").steps

    result = run(step.command, env=shell_env)

    assert result.returncode == 1
    assert result.stderr.strip() == step.after[0]


def test_the_licence_verdict_is_as_printed(shell_env):
    (step,) = blocks_starting(".venv/bin/python scripts/licences.py").steps

    result = run(step.command, env=shell_env)

    assert result.returncode == 0, result.stdout + result.stderr
    assert matches_printed(step.after[0], result.stdout.strip()), (step.after[0], result.stdout)


def test_the_site_builds_strictly_as_printed(shell_env, tmp_path):
    (step,) = blocks_starting(".venv/bin/mkdocs build --strict").steps

    # Into a folder of its own, so the site the service serves is left as setup built it.
    result = run(f"{step.command} --site-dir {tmp_path / 'site'}", env={**shell_env, "NO_MKDOCS_2_WARNING": "1"})

    assert result.returncode == 0, result.stderr
    assert "Documentation built" in result.stderr
    assert (tmp_path / "site" / "webhooks" / "index.html").is_file()


@pytest.fixture
def demo(settings, tmp_path, transactional_db):
    """`scripts/demo`'s seed, as its banner prints it: the demo tenant's keys."""
    settings.DEBUG, settings.VAR_DIR = True, tmp_path
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    out = io.StringIO()
    call_command("demo_seed", "--json", stdout=out)
    settings.DEBUG = False
    return json.loads(out.getvalue())


@pytest.fixture
def shell_env(tmp_path):
    """The environment the documented commands run in: the test database and Redis, a private var/ directory."""
    return {
        **os.environ,
        "DATABASE_URL": current_database_url(),
        "AGEVERIFY_VAR_DIR": str(tmp_path),
        "PYTHONUNBUFFERED": "1",
    }


def as_here(command: str, base_url: str, session_id: str | None = None) -> str:
    command = command.replace(DEMO_URL, base_url)
    return command.replace(PLACEHOLDER_SESSION, session_id) if session_id else command


def run_printed(step, *, base_url, env, session_id=None):
    """Runs a curl step; its answer has the printed status (a problem's `status`, else 2xx) and keys."""
    status, body = run_curl(as_here(step.command, base_url, session_id), env=env)
    printed_status = dict(printed_pairs(step.printed)).get("status")
    if isinstance(printed_status, int):
        assert status == printed_status, (step.command, status, body)
    else:
        assert 200 <= status < 300, (step.command, status, body)
    assert answer_mismatches(step.printed, body) == [], step.command
    return body


def test_the_walk_through_works_as_printed_with_either_key(demo, live_server, shell_env, sandbox_api):
    walk_through = blocks_starting("KEY=av_test_...")
    env = {**shell_env, "KEY": demo["test_api_key"]}
    session_id = None
    for step in walk_through.steps[1:]:
        body = run_printed(step, base_url=live_server.url, env=env, session_id=session_id)
        session_id = session_id or body["session"]["sessionId"]
    assert walk_through.steps[0].command.startswith("KEY=av_test_")

    # The same create command with the live key: its own Idempotency-Key space, so a new live session.
    create = walk_through.steps[1]
    status, live = run_curl(as_here(create.command, live_server.url), env={**env, "KEY": demo["api_key"]})
    assert (status, live["session"]["mode"]) == (201, "live")
    assert live["session"]["sessionId"] != session_id

    around = blocks_starting('curl -s "http://localhost:8000/v1/sessions?')
    listed, cancel = around.steps
    body = run_printed(listed, base_url=live_server.url, env=env)
    assert [item["session"]["sessionId"] for item in body["data"]] == [session_id]
    status, open_session = run_curl(
        as_here(create.command, live_server.url).replace("order-1234", "order-1235"), env=env
    )
    run_printed(cancel, base_url=live_server.url, env=env, session_id=open_session["session"]["sessionId"])


def test_the_onboarding_commands_work_as_printed(live_server, shell_env, tmp_path, transactional_db):
    on_demo, in_production = blocks_starting("DEBUG=1 .venv/bin/python manage.py create_tenant").steps
    env_file = tmp_path / "env"  # what deploy/env.example asks for, pointing at the test's services
    env_file.write_text(
        f"SECRET_KEY={secrets.token_hex(32)}\nFLOW_SIGNING_KEY={secrets.token_hex(32)}\n"
        f"DATABASE_URL={current_database_url()}\nREDIS_URL={shell_env.get('REDIS_URL', '')}\n"
    )
    production = in_production.command.replace("sudo -u ageverify ", "").replace("/etc/ageverify/env", str(env_file))
    production_env = {name: value for name, value in shell_env.items() if name != "DEBUG"}

    for step, command, env in ((on_demo, on_demo.command, shell_env), (in_production, production, production_env)):
        result = run(command, env=env)
        assert result.returncode == 0, (command, result.stderr)
        printed = json.loads(result.stdout)
        assert answer_mismatches(step.printed, printed) == []
        status, _ = run_curl(f'curl -s {live_server.url}/v1/sessions -H "X-API-Key: {printed["api_key"]}"', env=env)
        assert status == 200


def test_the_key_and_secret_commands_work_as_printed(shell_env, transactional_db, onboarded):
    from tenants.models import AuditLogEntry

    generate, revoke, rotate = blocks_starting("DEBUG=1 .venv/bin/python manage.py api_key_generate").steps
    tenant_id = onboarded.tenant.pk

    result = run(generate.command.replace("ten_01K...", tenant_id), env=shell_env)
    assert result.returncode == 0, result.stderr
    generated = json.loads(result.stdout)
    assert generate.printed and answer_mismatches(generate.printed, generated) == []
    result = run(revoke.command.replace("av_test_AbCdEfGhIjKl…", generated["prefix"]), env=shell_env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == revoke.after[0].replace("av_test_AbCdEfGhIjKl…", generated["prefix"])
    result = run(rotate.command.replace("ten_01K...", tenant_id), env=shell_env)
    assert result.returncode == 0, result.stderr
    assert rotate.printed and answer_mismatches(rotate.printed, json.loads(result.stdout)) == []

    log = AuditLogEntry.objects.filter(tenant_id=tenant_id).exclude(action="tenant.created").order_by("id")
    assert [(entry.action, entry.actor_label.split(" (")[0]) for entry in log] == [
        ("api_key.generated", "manage.py api_key_generate"),
        ("api_key.revoked", "manage.py api_key_revoke"),
        ("webhook_secret.rotated", "manage.py webhook_secret_rotate"),
    ]


def _free_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@contextmanager
def background(command: str, env: dict):
    """A documented command that runs until stopped; yields a queue of its output lines, stops it (by its pid)."""
    # Its own process group (bash and the command it runs), stopped by that group's id, which is its pid.
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line.rstrip("\n")) for line in process.stdout], daemon=True).start()
    try:
        yield lines
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


def next_line(lines: queue.Queue, pattern: str, timeout: float = 20) -> str:
    seen = []
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line matching {pattern!r}; got {seen}") from None
        if re.match(pattern, line):
            return line
        seen.append(line)


def test_the_local_webhook_recipe_works_as_printed(demo, live_server, shell_env, settings, celery_worker, tmp_path):
    receive, create, advance = blocks_starting("DEBUG=1 .venv/bin/python manage.py webhook_receiver").steps
    port = _free_port()
    env = {**shell_env, "KEY": demo["test_api_key"]}

    with background(f"{receive.command} --port {port}", env) as lines:
        assert next_line(lines, "Receiving webhooks at") == receive.printed.replace(RECEIVER_PORT, port)
        # What scripts/demo gives its sender: the receiver's authority beside the system's, loopback allowed.
        settings.WEBHOOK_CA_BUNDLE = str(tmp_path / "local-tls" / "trust.pem")
        settings.WEBHOOK_ALLOW_PRIVATE_TARGETS = True
        status, created = run_curl(as_here(create.command, live_server.url).replace(RECEIVER_PORT, port), env=env)
        assert status == 201, created
        session_id = created["session"]["sessionId"]
        status, advanced = run_curl(as_here(advance.command, live_server.url, session_id), env=env)
        assert (status, advanced["session"]["status"]) == (200, "approved"), advanced

        line = next_line(lines, r"verified test event msg_")
    printed_prefix, _, printed_body = advance.printed.partition(": ")
    prefix, _, body = line.partition(": ")
    assert re.fullmatch(printed_prefix.replace("msg_01K...", r"msg_[0-9A-Z]{26}"), prefix)
    assert answer_mismatches(printed_body, json.loads(body)) == []
    assert json.loads(body)["data"]["sessionId"] == session_id


def _received_event(session, receiver):
    """The webhook of a finished session, as the receiver got it: (body, headers)."""
    webhook_delivery_attempt(delivery_id=WebhookDelivery.objects.get(subject_ref=session.id).pk)
    received = receiver.wait_for(1)[-1]
    receiver.reset()
    return received.body, received.headers


def test_the_python_snippets_run_as_printed(live_server, onboarded, receiver, settings):
    (verify_snippet,) = python_blocks("docs/webhooks.md")
    client_snippet, confirm_snippet = python_blocks("docs/integration-api.md")
    tenant = onboarded.tenant
    live_event = _received_event(finished_session(tenant, mode="live", notification_url=receiver.url()), receiver)
    sandbox_event = _received_event(finished_session(tenant, mode="test", notification_url=receiver.url()), receiver)

    # The receiver's check: a live event passes; a sandbox one never does, not even with the live secret.
    scope = {
        "LIVE_WEBHOOK_SECRET": tenant.webhook_secret,
        "request": SimpleNamespace(body=live_event[0], headers=live_event[1]),
    }
    exec(verify_snippet, scope)
    assert scope["payload"]["data"]["mode"] == "live"
    with pytest.raises(WebhookVerificationError):
        exec(verify_snippet, {**scope, "request": SimpleNamespace(body=sandbox_event[0], headers=sandbox_event[1])})

    # The client: create, wait (a sandbox outcome arrives meanwhile), verify a webhook of the key's mode.
    def approve_the_new_session():
        try:
            session = wait_until(
                lambda: VerificationSession.objects.filter(subject="user-42", mode="test").first(), timeout=120
            )
            sandbox_advance(session_id=session.id, to="approved")
        finally:
            db_connection.close()  # this thread's own, or the test database could not be dropped

    approver = threading.Thread(target=approve_the_new_session)
    approver.start()
    scope = {
        "API_KEY": onboarded.test_key,
        "WEBHOOK_SECRET": tenant.test_webhook_secret,
        "request": SimpleNamespace(body=sandbox_event[0], headers=sandbox_event[1]),
    }
    exec(client_snippet.replace(DEMO_URL, live_server.url).replace("timeout=600", "timeout=600, interval=0.2"), scope)
    approver.join()
    scope["av"].close()  # hang up: the live server's thread holds a database connection while we keep ours
    assert scope["result"].status == "approved" and scope["event"].data.mode == "test"

    # The confirmation: an approved live session of this user passes; anything else lands in the except.
    approved = finished_session(tenant, mode="live", subject="user-42")  # age_limit 18, as the snippet asks
    with type(scope["av"])(onboarded.live_key, base_url=live_server.url) as live_client:
        exec(confirm_snippet, {**scope, "av": live_client, "session_id": approved.id})
