"""The container smoke test (issue 31): docs/containers.md's commands, run as printed, build the images and run
compose.yaml on this machine with podman; a sandbox session's webhook reaches a receiver container and verifies
with the `standardwebhooks` package; scaled out, a web replica and a webhooks worker are killed and the next
sessions still complete, each with exactly one webhook.

Marked `containers`: left out unless asked with AV_TEST_CONTAINERS=1 (tests/conftest.py), which CI's .ci/run sets.
It installs what it needs (scripts/containers-host), prints how long each stage took, and always takes the
stack down. The tests run in order on one stack (module-scoped): build, one host, then scaled out.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
import requests
from standardwebhooks import Webhook

from ageverify_client._transport import RETRYABLE_SERVER_STATUSES
from tests.support.readme import answer_mismatches
from tests.support.waiting import wait_until
from webhooks.local_tls import tls_files_make

from .stack import REPO, Stack, Stages, docs_block

pytestmark = pytest.mark.containers

ARTIFACTS = REPO / "test-artifacts" / "containers"
ONE_HOST = "cp deploy/compose.env.example .env"  # the first command of each docs block the test runs
SCALED = "export COMPOSE_FILE=compose.yaml:compose.scale.yaml"
STOP = "podman-compose down"
BACKUP = "podman-compose exec -T postgres pg_dump"
RECEIVER_HOST = "webhooks.receiver.test"  # its alias on compose's network (compose.smoke.yaml)
RETRIED_STATUSES = RETRYABLE_SERVER_STATUSES | {409}  # as clients/ retry a create that carries its key
HOST = 'eval "$(sudo scripts/containers-host)"'
CACHE_TAG = "localhost/ageverify:smoke-cache"
COMPILERS = ("gcc", "cc", "c++", "g++", "clang", "cc1", "cc1plus", "tcc")


@pytest.fixture(scope="module")
def stages(pytestconfig):
    reporter = pytestconfig.pluginmanager.getplugin("terminalreporter")
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")

    def write_line(text: str) -> None:  # shown as it happens, whether the test passes or not
        if reporter is None or capture is None:
            print(text, file=sys.stderr)
            return
        with capture.global_and_fixture_disabled():
            reporter.write_line(text)

    timings = Stages(write_line)
    yield timings
    write_line(f"containers: {timings.summary()}")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "timings.json").write_text(json.dumps(dict(timings.took), indent=1))


def host_settings(stages: Stages) -> dict[str, str]:
    """The docs' host preparation (as root already, so without sudo); the settings it exports."""
    command = docs_block(HOST).steps[0].command.replace("sudo ", "")
    names = ("BASE_IMAGE", "EXTRA_CA_CERTS", "BUILDAH_FORMAT")
    printed = " ".join(f'"${name}"' for name in names)
    with stages.stage("host: packages, podman settings, base image"):
        result = subprocess.run(
            ["bash", "-c", f"{command} && printf '%s\\0' {printed}"], cwd=REPO, capture_output=True, text=True
        )
    assert result.returncode == 0, result.stderr
    settings = dict(zip(names, result.stdout.split("\0")))
    assert settings["BASE_IMAGE"] and settings["BUILDAH_FORMAT"] == "docker", settings
    return settings


@pytest.fixture(scope="module")
def stack(stages, tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the container smoke test runs podman as root (CI does); unset AV_TEST_CONTAINERS to leave it out")
    workdir = tmp_path_factory.mktemp("containers")
    mounted = workdir / "mount"  # what the receiver and the webhooks workers see as /smoke
    tls = tls_files_make(mounted, dns_names=(RECEIVER_HOST,), ca_name="AgeVerify smoke test CA")
    shutil.copy(Path(__file__).with_name("receiver.py"), mounted / "receiver.py")
    mounted.chmod(0o755)
    for path in mounted.iterdir():
        path.chmod(0o644)  # the containers run as uid 10001; a throwaway test key
    assert tls.cert_chain.exists()

    smoke = Stack(workdir, mounted, host_settings(stages))
    try:
        yield smoke
    finally:
        stop = docs_block(STOP)
        with stages.stage("tear down (podman-compose down, then down -v)"):
            try:
                smoke.save_logs(ARTIFACTS)
                volumes = smoke.volumes()
                smoke.run_docs_steps(stop, first="podman-compose down", last="podman-compose down")
                kept = smoke.volumes()
            finally:
                smoke.run_docs_steps(stop, first="podman-compose down -v", last="podman-compose down -v")
                # One tag kept for the next run's layer cache (the final stage's layers go with their image).
                smoke.run(f"podman tag {smoke.image} {CACHE_TAG} && podman rmi {smoke.image}", check=False)
            left = (smoke.containers(running=False), smoke.volumes())
        assert kept == volumes, "`podman-compose down` removed volumes"
        assert left == ([], []), f"containers and volumes left after down -v: {left}"


def wait_ready(stack: Stack, timeout: float = 240) -> None:
    def ready():
        try:
            return requests.get(f"{stack.base_url}/readyz", timeout=5).status_code == 200
        except requests.RequestException:
            return False

    wait_until(ready, timeout=timeout, interval=1)


def create_and_approve(
    stack: Stack, tenant: dict, subject: str, timings: list[float] | None = None, retried: list[str] | None = None
) -> str:
    """A sandbox session that notifies the receiver container, advanced to approved through the API.

    The creation is sent as the service's clients (clients/) send it: with an `Idempotency-Key`, and again with
    the same key when no answer came in 30 s, while the first is still in progress (409), or after a 5xx (a
    survivor answers 503 `service_unavailable` while the container DNS forgets a killed replica and its database
    lookup fails), so a retry can never make a second session. `timings` gets how long the session took, created
    and approved; `retried` gets the answers that were retried."""
    headers = {"X-API-Key": tenant["test_api_key"]}
    started = time.monotonic()
    for attempt in range(1, 5):
        try:
            created = requests.post(
                f"{stack.base_url}/v1/sessions",
                json={
                    "subject": subject,
                    "age_limit": 18,
                    "notification_url": f"https://{RECEIVER_HOST}:8443/webhooks",
                },
                headers={**headers, "Idempotency-Key": f"smoke-{subject}"},
                timeout=30,
            )
        except requests.Timeout:
            if attempt == 4:
                raise
            if retried is not None:
                retried.append("timeout")
            continue
        if created.status_code not in RETRIED_STATUSES or attempt == 4:
            break
        if retried is not None:
            retried.append(str(created.status_code))
        time.sleep(2)
    assert created.status_code == 201, created.text
    session_id = created.json()["session"]["sessionId"]
    advanced = requests.post(
        f"{stack.base_url}/v1/test/sessions/{session_id}/advance", json={"to": "approved"}, headers=headers, timeout=30
    )
    assert (advanced.status_code, advanced.json()["session"]["status"]) == (200, "approved"), advanced.text
    if timings is not None:
        timings.append(time.monotonic() - started)
    return session_id


def received_webhooks(stack: Stack, secret: str) -> dict[str, set[str]]:
    """Session id -> the webhook ids it arrived under; every request must verify with the tenant's test secret."""
    listing = requests.get(f"http://127.0.0.1:{stack.receiver_port}/", timeout=10).json()
    by_session = defaultdict(set)
    for request in listing:
        payload = Webhook(secret).verify(base64.b64decode(request["body"]), request["headers"])
        assert payload["event"] == "verification.completed" and payload["data"]["mode"] == "test", payload
        assert payload["data"]["status"] == "approved", payload
        by_session[payload["data"]["sessionId"]].add(request["headers"]["webhook-id"])
    return by_session


def wait_for_webhooks(stack: Stack, secret: str, sessions: list[str], timeout: float = 120) -> dict[str, set[str]]:
    wait_until(lambda: set(sessions) <= set(received_webhooks(stack, secret)), timeout=timeout, interval=1)
    return received_webhooks(stack, secret)


def make_tenant(stack: Stack) -> dict:
    block = docs_block(ONE_HOST)
    command = "podman-compose exec -T web python manage.py create_tenant"
    printed = next(step.printed for step in block.steps if step.command.startswith(command))
    tenant = json.loads(stack.run_docs_steps(block, first=command, last=command)[0])
    assert answer_mismatches(printed, tenant) == []
    return tenant


def test_the_image_builds_as_printed_runs_as_a_user_and_holds_no_compiler_and_no_secret(stack, stages):
    with stages.stage("build (podman-compose build)"):
        stack.run_docs_steps(
            docs_block(ONE_HOST), first="podman-compose build", last="podman-compose build", timeout=3600
        )

    with stages.stage("inspect the image"):
        image = json.loads(stack.run(f"podman image inspect {stack.image}").stdout)[0]
        assert image["Config"]["User"] == "ageverify:ageverify"
        assert stack.run(f"podman run --rm --entrypoint id {stack.image} -u").stdout.strip() == "10001"
        assert image.get("Healthcheck"), "the image has no HEALTHCHECK (built in podman's OCI format?)"

        names = " -o ".join(f"-name {name!r}" for name in COMPILERS)
        found = stack.run(
            f"podman run --rm --user root --entrypoint find {stack.image} / -xdev ! -type d \\( {names} \\) -print"
        )
        assert found.stdout.split() == [], f"compilers in the image: {found.stdout}"

        variables = [entry.split("=", 1)[0] for entry in image["Config"]["Env"]]
        assert not [
            name for name in variables if any(word in name for word in ("SECRET", "KEY", "TOKEN", "PASSWORD", "CERT"))
        ]
        history = stack.run(f"podman history --no-trunc --format '{{{{.CreatedBy}}}}' {stack.image}").stdout
        assert "BEGIN CERTIFICATE" not in history and "EXTRA_CA_CERTS" not in history
        files = stack.run(
            f"podman run --rm --user root --entrypoint sh {stack.image} -c "
            '\'find / -xdev \\( -name .env -o -name "*.env" -o -name build-extra.crt \\) -print; '
            f"grep -rlsF {' '.join(f'-e {value}' for value in stack.secrets())} /app /etc /root /home /tmp /var'",
            check=False,
        )
        assert files.stdout.split() == [], f"secrets or environment files in the image: {files.stdout}"

    with stages.stage("check .dockerignore keeps .env out of a build"):
        # Operators keep their secrets in .env beside compose.yaml, inside the build context: no build may take it.
        context = stack.workdir / "context"
        context.mkdir()
        shutil.copy(REPO / ".dockerignore", context)
        (context / ".env").write_text("SECRET_KEY=canary\n")
        (context / "site.env").write_text("SECRET_KEY=canary\n")
        (context / "kept.txt").write_text("kept\n")
        (context / "Containerfile").write_text(f"FROM {stack.env['BASE_IMAGE']}\nCOPY . /context/\n")
        stack.run(f"podman build -q -t localhost/ageverify-ignore-check:{os.getpid()} {context}")
        listed = stack.run(f"podman run --rm localhost/ageverify-ignore-check:{os.getpid()} ls -A /context").stdout
        stack.run(f"podman rmi localhost/ageverify-ignore-check:{os.getpid()}", check=False)
        assert sorted(listed.split()) == ["kept.txt"], listed


def test_on_one_host_a_sandbox_session_completes_with_one_signed_webhook(stack, stages):
    block = docs_block(ONE_HOST)
    with stages.stage("up on one host (podman-compose up -d) until /readyz"):
        stack.run_docs_steps(block, first="podman-compose up -d", last="podman-compose up -d")
        wait_ready(stack)

    with stages.stage("one host: tenant, session, webhook, probes, backup"):
        stack.tenant = tenant = make_tenant(stack)
        session_id = create_and_approve(stack, tenant, "smoke-one-host")
        webhooks = wait_for_webhooks(stack, tenant["test_webhook_secret"], [session_id])
        assert webhooks == {session_id: webhooks[session_id]} and len(webhooks[session_id]) == 1, webhooks

        readyz = next(step for step in block.steps if step.command.startswith("curl -s http://127.0.0.1:8000/readyz"))
        answer = json.loads(stack.run_docs_steps(block, first=readyz.command, last=readyz.command)[0])
        assert answer == {"status": "ready", "checks": {"database": "ok", "broker": "ok"}}
        assert answer_mismatches(readyz.printed, answer) == []

        pipeline = next(step for step in block.steps if step.command.startswith("curl -s http://127.0.0.1:8000/ops/"))

        def pipeline_ok():  # each queue's first heartbeat comes within beat's first 30 s
            answer = json.loads(stack.run_docs_steps(block, first="TOKEN=", last=pipeline.command)[0])
            return answer if answer["status"] == "ok" else None

        assert answer_mismatches(pipeline.printed, wait_until(pipeline_ok, timeout=120, interval=3)) == []

        # The broker persists nothing, so a queued picture never reaches a disk: no append-only file, no snapshot.
        redis = stack.containers("redis")[0]
        config = stack.run(f"podman exec {redis} redis-cli config get appendonly save dir").stdout.split("\n")
        config = dict(zip(config[0::2], config[1::2], strict=False))
        assert config["appendonly"] == "no" and config["save"] == "", config
        written = stack.run(f"podman exec {redis} ls -A {config['dir']}").stdout.split()
        assert not [name for name in written if name.startswith(("dump", "appendonly", "temp-"))], written

        # The image's HEALTHCHECK, run by hand (podman schedules it through systemd, which this machine lacks).
        for service in ("web", "worker-webhooks", "beat"):
            checked = stack.run(f"podman healthcheck run {stack.containers(service)[0]}", check=False)
            assert checked.returncode == 0, (service, checked.stdout, checked.stderr)

        backup = docs_block(BACKUP).steps[0].command
        dump = stack.workdir / "backup.dump"
        stack.run(backup.replace("> ageverify-$(date +%F).dump", f"> {dump}"), timeout=120)
        listed = stack.run(f"pg_restore --list {dump}").stdout
        assert (
            "TABLE DATA public tenants_tenant" in listed
            and "TABLE DATA public sessions_api_verificationsession" in listed
        )


def test_scaled_out_a_dead_web_replica_and_webhooks_worker_lose_and_double_no_webhook(stack, stages):
    tenant = getattr(stack, "tenant", None) or make_tenant(stack)
    secret = tenant["test_webhook_secret"]
    block = docs_block(SCALED)
    with stages.stage("scale out: build, up -d over the running stack, until /readyz"):
        stack.run_docs_steps(block, first=SCALED, last="podman-compose up -d", timeout=1800)
        wait_until(
            lambda: (
                [len(stack.containers(name)) for name in ("web", "worker-analysis", "worker-webhooks", "beat", "proxy")]
                == [2, 2, 2, 1, 1]
            ),
            timeout=120,
            interval=2,
        )
        wait_ready(stack)
        # Once the proxy has answered, it answers every request: each nginx worker must know the replicas are
        # up (a worker that saw them refuse while they started once answered 502 for 10 s more).
        statuses = [requests.get(f"{stack.base_url}/readyz", timeout=5).status_code for _ in range(40)]
        assert set(statuses) == {200}, statuses
        answer = json.loads(stack.run_docs_steps(block, first="curl -s", last="curl -s")[0])
        assert answer_mismatches(block.steps[-1].printed, answer) == []

    with stages.stage("scale out: sessions, kill a web replica and a webhooks worker, sessions"):
        before = [create_and_approve(stack, tenant, f"smoke-before-{n}") for n in range(3)]
        wait_for_webhooks(stack, secret, before)

        killed = [stack.containers("web")[0], stack.containers("worker-webhooks")[0]]
        # The survivor's next database connection looks `postgres` up while aardvark-dns reloads for the killed
        # containers: its resolver must give up on a lost query after 1 s, not 5 (compose.yaml, docs/containers.md).
        resolver = stack.run(f"podman exec {stack.containers('web')[1]} cat /etc/resolv.conf").stdout
        assert "timeout:1" in resolver and "attempts:2" in resolver, resolver
        stack.run(f"podman kill {' '.join(killed)}")
        durations: list[float] = []
        retried: list[str] = []
        after = [create_and_approve(stack, tenant, f"smoke-after-{n}", durations, retried) for n in range(6)]
        webhooks = wait_for_webhooks(stack, secret, before + after, timeout=180)

    stages.write_line(f"containers: killed {killed}; {len(before) + len(after)} sessions, webhooks {dict(webhooks)}")
    stages.write_line(
        f"containers: sessions after the kill took {', '.join(f'{t:.1f}' for t in durations)} s;"
        f" creations retried after {retried or 'nothing'}"
    )
    stages.write_line(f"containers: memory in use: {stack.memory()}")
    doubled = {session: ids for session, ids in webhooks.items() if len(ids) != 1}
    assert doubled == {}, f"sessions with more than one webhook id: {doubled}"
    assert set(webhooks) >= set(before + after)
