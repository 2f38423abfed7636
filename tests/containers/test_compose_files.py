"""compose.yaml and compose.scale.yaml against the systemd units and the docs, without running anything (the smoke
test, test_smoke.py, runs them): the same processes on the same queues, one beat however far it is scaled, and
every command block of docs/containers.md either run by the smoke test or excused here."""

import json
import re

import yaml

from tests.support.readme import page_blocks
from tests.test_deploy import exec_start

from .stack import DOCS, REPO
from .test_smoke import BACKUP, HOST, ONE_HOST, SCALED, STOP

NOT_RUN = {
    "docker build": "the same Containerfile, which the smoke test builds through `podman-compose build`",
    "git pull": "upgrading: the smoke test runs the same build and `up -d` over a running stack when it scales out",
    "podman-compose exec -T postgres pg_restore": "overwrites the database; the test lists the backup with pg_restore",
}


class ComposeLoader(yaml.SafeLoader):
    """Reads compose's `!reset` (which empties an inherited value) as an empty value."""


ComposeLoader.add_constructor("!reset", lambda loader, node: [] if isinstance(node, yaml.SequenceNode) else None)


def compose(name: str) -> dict:
    return yaml.load((REPO / name).read_text(), Loader=ComposeLoader)["services"]


def test_every_docs_block_is_run_by_the_smoke_test_or_says_why_not():
    run = (ONE_HOST, SCALED, STOP, BACKUP, HOST)
    for block in page_blocks(DOCS):
        known = [prefix for prefix in (*run, *NOT_RUN) if block.first_command.startswith(prefix)]
        assert known, (
            f"docs/containers.md block under {block.heading!r} ({block.first_command!r}) is neither run nor excused"
        )


def test_the_services_run_the_systemd_units_commands():
    services = compose("compose.yaml")
    for service, unit in [
        ("web", "ageverify-web.service"),
        ("worker-analysis", "ageverify-worker-analysis.service"),
        ("worker-webhooks", "ageverify-worker-webhooks.service"),
        ("beat", "ageverify-beat.service"),
    ]:
        in_unit = exec_start(unit)
        command = services[service]["command"]
        assert command[0] == in_unit[0].rsplit("/", 1)[-1], service  # gunicorn or celery, from the image's PATH
        # The same options, but where the process listens, the node name's host part and beat's schedule file.
        differs = re.compile(r"^(127\.0\.0\.1|0\.0\.0\.0):8000$|@%%?[hH]$|celerybeat-schedule$")
        assert [arg for arg in command[1:] if not differs.search(arg)] == [
            arg for arg in in_unit[1:] if not differs.search(arg)
        ], service


def test_scaled_out_the_replicas_sit_behind_the_proxy_and_beat_stays_single():
    base, scaled = compose("compose.yaml"), compose("compose.scale.yaml")

    published = "${AGEVERIFY_BIND:-127.0.0.1}:${AGEVERIFY_PORT:-8000}"
    assert base["web"]["ports"] == [f"{published}:8000"]
    # Scaled out, the proxy takes the address over and the replicas are on compose's network only.
    assert scaled["web"]["ports"] == [] and scaled["proxy"]["ports"] == [f"{published}:8080"]
    for service in ("web", "worker-analysis", "worker-webhooks"):
        assert scaled[service]["deploy"] == {"mode": "replicated", "replicas": 2}, service
    assert "beat" not in scaled and "deploy" not in base["beat"]


def test_every_image_builds_from_the_official_debian_image_unless_told_otherwise():
    official = "docker.io/library/debian:bookworm-slim"
    containerfiles = [REPO / "Containerfile", *sorted((REPO / "deploy" / "containers").glob("*.Containerfile"))]
    for path in containerfiles:
        assert f"ARG BASE_IMAGE={official}\n" in path.read_text(), path
    for services in (compose("compose.yaml"), compose("compose.scale.yaml")):
        for name, service in services.items():
            if "build" in service:
                assert service["build"]["args"]["BASE_IMAGE"] == f"${{BASE_IMAGE:-{official}}}", name


def redis_command() -> list[str]:
    """The command the compose Redis runs: the service's own `command`, or else its image's CMD."""
    service = compose("compose.yaml")["redis"]
    if "command" in service:
        return service["command"]
    containerfile = REPO / "deploy" / "containers" / service["build"]["dockerfile"]
    cmd = [line for line in containerfile.read_text().splitlines() if line.startswith("CMD ")]
    return json.loads(cmd[-1].removeprefix("CMD "))


def test_the_compose_redis_keeps_queued_pictures_off_the_disk():
    # Queued analyses carry the user's pictures: like the systemd deployment (docs/operations.md), the broker keeps
    # no append-only file and no snapshot, and has no volume to write one to.
    command = redis_command()
    options = dict(zip(command[1::2], command[2::2], strict=False))
    assert command[0] == "redis-server"
    assert options.get("--appendonly") == "no" and options.get("--save") == "", command
    assert "volumes" not in compose("compose.yaml")["redis"]
    assert "VOLUME" not in (REPO / "deploy" / "containers" / "redis.Containerfile").read_text()
