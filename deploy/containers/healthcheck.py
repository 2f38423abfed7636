"""The image's HEALTHCHECK. One image runs several processes, so what "healthy" means follows the command
the container runs (its process 1, after the entry point's `exec`):

- gunicorn: GET /healthz answers 200 (the process serves; /readyz, which also needs PostgreSQL and
  Redis, is for load balancers, so that a database outage does not get every web container restarted);
- a Celery worker: it answers `celery inspect ping` addressed to its own node name;
- anything else (beat, a one-off command): running is healthy.

Exit 0 healthy, 1 unhealthy, as Docker and podman expect. Standard library only, except the worker's
ping, which is Celery's own command.
"""

import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path


def command() -> list[str]:
    """Process 1's arguments, the interpreter dropped (`python /app/.venv/bin/gunicorn ...` -> `gunicorn ...`)."""
    args = [arg.decode() for arg in Path("/proc/1/cmdline").read_bytes().split(b"\0") if arg]
    while args and Path(args[0]).name.startswith("python"):
        args = args[1:]
    return [Path(args[0]).name, *args[1:]] if args else []


def a_host_django_accepts() -> str:
    """The first ALLOWED_HOSTS entry (Django answers 400 to any other Host), as a plain host name."""
    first = (os.environ.get("ALLOWED_HOSTS") or "localhost").split(",")[0].strip()
    return "localhost" if first in ("", "*") else first.lstrip(".")


def web_healthy() -> bool:
    request = urllib.request.Request("http://127.0.0.1:8000/healthz", headers={"Host": a_host_django_accepts()})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status == 200
    except OSError as error:
        print(f"/healthz: {error}", file=sys.stderr)
        return False


def worker_healthy(args: list[str]) -> bool:
    node = args[args.index("-n") + 1] if "-n" in args else "celery@%h"
    node = node.replace("%h", socket.gethostname())
    ping = ["celery", "-A", "ageverify", "inspect", "ping", "--destination", node, "--timeout", "5"]
    return subprocess.run(ping, capture_output=True).returncode == 0


def main() -> int:
    args = command()
    if args[:1] == ["gunicorn"]:
        return 0 if web_healthy() else 1
    if args[:1] == ["celery"] and "worker" in args:
        return 0 if worker_healthy(args) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
