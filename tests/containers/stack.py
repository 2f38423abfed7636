"""The smoke test's side of compose: docs/containers.md's commands run as printed in a shell, with the test's
environment (its own env file, project name, image tag and loopback ports), timed stage by stage.
"""

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from tests.support.readme import Block, page_blocks

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "containers.md"
ENV_EXAMPLE = REPO / "deploy" / "compose.env.example"
SMOKE_COMPOSE = "tests/containers/compose.smoke.yaml"
DOCS_PORT = "127.0.0.1:8000"
ASSIGNMENT = re.compile(r"^(export )?[A-Za-z_][A-Za-z0-9_]*=")


def docs_block(first_command: str) -> Block:
    """The block of docs/containers.md whose first command starts with `first_command`."""
    found = [block for block in page_blocks(DOCS) if block.first_command.startswith(first_command)]
    assert found, f"docs/containers.md has no block starting with {first_command!r}"
    return found[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def compose_settings(*, filled: bool = True) -> dict[str, str]:
    """deploy/compose.env.example's settings; `filled`: every change-me replaced by a new secret, as docs/containers.md
    tells an operator (`openssl rand -hex 32`)."""
    settings = {}
    for line in ENV_EXAMPLE.read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            settings[name] = secrets.token_hex(32) if filled and value == "change-me" else value
    assert {"SECRET_KEY", "FLOW_SIGNING_KEY", "PIPELINE_STATUS_TOKEN", "POSTGRES_PASSWORD"} <= set(settings)
    return settings


class Stages:
    """How long each stage took, printed as each one ends (past pytest's capture) and all at the end."""

    def __init__(self, write_line):
        self.write_line = write_line
        self.took: list[tuple[str, float]] = []

    @contextmanager
    def stage(self, name: str):
        started = time.monotonic()
        try:
            yield
        finally:
            seconds = time.monotonic() - started
            self.took.append((name, seconds))
            self.write_line(f"containers: {name}: {seconds:.1f} s")

    def summary(self) -> str:
        return "; ".join(f"{name} {seconds:.1f} s" for name, seconds in self.took)


class Stack:
    """One compose project of the smoke test: settings written from deploy/compose.env.example, run by the docs'
    own commands (`run`), with the test's receiver added to whatever COMPOSE_FILE the docs set."""

    def __init__(self, workdir: Path, mounted: Path, host_settings: dict[str, str]):
        self.workdir = workdir
        self.tenant: dict | None = None  # create_tenant's answer, once made
        self.port = free_port()
        self.receiver_port = free_port()
        self.project = f"ageverify-smoke-{os.getpid()}"
        self.image = f"localhost/ageverify:smoke-{os.getpid()}"
        self.settings = self._write_env_file()
        self.env = {
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # the venv's podman-compose first
            "HOME": os.environ.get("HOME", "/root"),
            "LANG": "C.UTF-8",
            **host_settings,
            # compose reads these for compose.yaml itself (an operator's come from .env beside it).
            **{name: value for name, value in self.settings.items() if name.startswith(("AGEVERIFY_", "POSTGRES_"))},
            "AGEVERIFY_ENV_FILE": str(self.env_file),
            "COMPOSE_PROJECT_NAME": self.project,
            "COMPOSE_FILE": f"compose.yaml:{SMOKE_COMPOSE}",
            "SMOKE_DIR": str(mounted),
            "SMOKE_RECEIVER_PORT": str(self.receiver_port),
        }

    @property
    def env_file(self) -> Path:
        return self.workdir / "smoke.env"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _write_env_file(self) -> dict[str, str]:
        """The example with every change-me replaced by a new secret, and this test's addresses."""
        settings = compose_settings()
        settings.update(
            AGEVERIFY_PORT=str(self.port),
            AGEVERIFY_IMAGE=self.image,
            ALLOWED_HOSTS="127.0.0.1,localhost",
            PUBLIC_BASE_URL=self.base_url,
            CSRF_TRUSTED_ORIGINS=self.base_url,
            # The receiver is a container on compose's private network.
            WEBHOOK_ALLOW_PRIVATE_TARGETS="1",
        )
        self.env_file.write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
        self.env_file.chmod(0o600)
        return settings

    def secrets(self) -> list[str]:
        return [value for name, value in self.settings.items() if value and name.endswith(("KEY", "TOKEN", "PASSWORD"))]

    def as_here(self, command: str) -> str:
        """A docs command pointed at this stack: its port, its env file, the receiver added to COMPOSE_FILE."""
        command = command.replace(DOCS_PORT, f"127.0.0.1:{self.port}").replace(" .env", f" {self.env_file}")
        return command.replace("COMPOSE_FILE=compose.yaml:compose.scale.yaml", self._scaled_compose_file())

    @staticmethod
    def _scaled_compose_file() -> str:
        return f"COMPOSE_FILE=compose.yaml:compose.scale.yaml:{SMOKE_COMPOSE}"

    def run(
        self, command: str, *, timeout: float = 600, check: bool = True, log_output: bool = True
    ) -> subprocess.CompletedProcess:
        """A shell command in the checkout with this stack's environment, logged in the work dir."""
        started = time.monotonic()
        result = subprocess.run(
            ["bash", "-c", command], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        with (self.workdir / "commands.log").open("a") as log:
            took = time.monotonic() - started
            output = f"{result.stdout}\n{result.stderr}\n" if log_output or result.returncode else ""
            log.write(f"$ {command}\n(exit {result.returncode}, {took:.1f} s)\n{output}")
        if check:
            assert result.returncode == 0, f"{command!r} exited {result.returncode}:\n{result.stderr[-4000:]}"
        return result

    def run_docs_steps(self, block: Block, *, first: str, last: str, timeout: float = 600) -> list[str]:
        """The block's commands as printed, from the one starting with `first` to the one starting with `last`,
        each in a shell that has the block's variable assignments before it (`TOKEN=...`; an `export` also
        holds for this stack's later commands). Returns the output of each command that is not an assignment."""
        outputs, assignments, started = [], "", False
        for step in block.steps:
            started = started or step.command.startswith(first)
            command = self.as_here(step.command)
            if ASSIGNMENT.match(command):
                assignments += command + "\n"
                if started and command.startswith("export "):
                    self.env.update([command.removeprefix("export ").split("=", 1)])
            elif started:
                outputs.append(self.run(assignments + command, timeout=timeout).stdout)
            if started and step.command.startswith(last):
                return outputs
        raise AssertionError(f"no commands from {first!r} to {last!r} in the block under {block.heading!r}")

    def containers(self, service: str | None = None, *, running: bool = True) -> list[str]:
        """This project's containers (of one service), running ones only unless told otherwise."""
        listed = self.run(
            f"podman ps -a --format json --filter label=io.podman.compose.project={self.project}", log_output=False
        )
        found = []
        for container in json.loads(listed.stdout):
            labels = container.get("Labels") or {}
            if service and labels.get("io.podman.compose.service") != service:
                continue
            if running and container.get("State") != "running":
                continue
            found.append(container["Names"][0])
        return sorted(found)

    def volumes(self) -> list[str]:
        listed = self.run(f"podman volume ls -q --filter label=io.podman.compose.project={self.project}")
        return sorted(listed.stdout.split())

    def memory(self) -> str:
        """Each running container's memory in use (podman stats), for docs/containers.md's sizing table."""
        stats = json.loads(self.run(f"podman stats --no-stream --format json {' '.join(self.containers())}").stdout)
        used = {entry["name"].removeprefix(f"{self.project}_"): entry["mem_usage"].split(" / ")[0] for entry in stats}
        return ", ".join(f"{name} {usage}" for name, usage in sorted(used.items()))

    def save_logs(self, into: Path) -> None:
        """Each container's output and the commands run, into `into` (CI keeps test-artifacts/)."""
        shutil.rmtree(into, ignore_errors=True)
        into.mkdir(parents=True)
        shutil.copy(self.workdir / "commands.log", into / "commands.log")
        for name in self.containers(running=False):
            logs = self.run(f"podman logs {name}", check=False)
            (into / f"{name}.log").write_text(logs.stdout + logs.stderr)
