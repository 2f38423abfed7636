"""CPU instructions per API request (baseline, GET, POST), counted by callgrind.

A measure the machine's load does not move.

Run by hand:  .venv/bin/python bench/api_instructions.py [--requests 200] [--warmup 100] [--keep DIR]
                                                     [--through gunicorn]

--keep DIR keeps each endpoint's callgrind file (DIR/callgrind.<endpoint>), to see where the
instructions go: `callgrind_annotate --inclusive=yes DIR/callgrind.POST | head -60`.

bench/api.py measures throughput, which on a shared machine moves with whatever else runs on it (its
ratios moved by a tenth between runs of one day). This counts what the service itself executes for one
request: each endpoint runs in its own Python process under `valgrind --tool=callgrind` (Debian's
package; installed here if missing), which serves --warmup requests uncounted, then --requests counted
ones, through the WSGI application gunicorn calls (the same settings overlay, middleware, database and
Redis as bench/api.py). Not counted: gunicorn's HTTP parsing and the sockets (the same for every
endpoint), PostgreSQL and Redis themselves, and the kernel. --through gunicorn counts in a gunicorn sync
worker instead (the README's command with one worker, under callgrind), driven over loopback one
connection per request as wrk's are served: gunicorn's HTTP parsing and the worker's side of the
sockets are then counted too, as the throughput benchmark pays them. Prints instructions per request and the
baseline's count over each endpoint's: a ratio of work, which the throughput ratios follow when the
CPU is what limits them.
"""

import argparse
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.api import (  # noqa: E402 - after the repository is on the path
    POST_BODY,
    ensure_database,
    ensure_debian_tool,
    prepare_environment,  # noqa: E402
    seed_sessions,
    wait_for_port,
)

ENDPOINTS = ("baseline", "GET", "POST")
GUNICORN_PORT = 16601


def serve(endpoint: str, api_key: str, session_id: str, warmup: int, requests: int) -> None:
    """In the child under callgrind: `warmup` requests, then `requests` with instrumentation on."""
    import django

    django.setup()
    from ageverify.wsgi import application

    body = json.dumps(POST_BODY).encode()
    method, path, data = {
        "baseline": ("GET", "/v1/bench/baseline", b""),
        "GET": ("GET", f"/v1/sessions/{session_id}", b""),
        "POST": ("POST", "/v1/sessions", body),
    }[endpoint]

    def call() -> None:
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "16600",
            "HTTP_HOST": "127.0.0.1:16600",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(data),
            "wsgi.errors": sys.stderr,
            "CONTENT_LENGTH": str(len(data)),
            "CONTENT_TYPE": "application/json",
            "HTTP_X_API_KEY": api_key,
        }
        status = []
        chunks = application(environ, lambda line, headers, exc_info=None: status.append(line))
        b"".join(chunks)
        chunks.close()
        if not status[0].startswith("2"):
            raise SystemExit(f"{endpoint}: {status[0]}")

    for _ in range(warmup):
        call()
    instrumentation(os.getpid(), "on")
    for _ in range(requests):
        call()
    instrumentation(os.getpid(), "off")


def instrumentation(pid: int, state: str) -> None:
    subprocess.run(["callgrind_control", f"--instr={state}", str(pid)], check=True, capture_output=True)


def total_instructions(callgrind_file: Path) -> int:
    totals = [line for line in callgrind_file.read_text().splitlines() if line.startswith("totals:")]
    return int(totals[-1].split()[1])


def count(valgrind: str, endpoint: str, api_key: str, session_id: str, args) -> int:
    with tempfile.TemporaryDirectory(prefix="ageverify-callgrind-") as scratch:
        out = Path(args.keep or scratch) / f"callgrind.{endpoint}"
        if args.through == "gunicorn":
            return count_in_gunicorn(valgrind, endpoint, api_key, session_id, args, Path(scratch), out)
        subprocess.run(
            [
                valgrind,
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                __file__,
                "--serve",
                endpoint,
                api_key,
                session_id,
                "--warmup",
                str(args.warmup),
                "--requests",
                str(args.requests),
            ],
            cwd=REPO,
            check=True,
            stderr=subprocess.DEVNULL,
        )
        return total_instructions(out)


def raw_request(endpoint: str, api_key: str, session_id: str) -> bytes:
    """The bytes wrk sends for `endpoint` (its Lua scripts in bench/api.py set the same headers and body)."""
    host = f"Host: 127.0.0.1:{GUNICORN_PORT}\r\nX-API-Key: {api_key}\r\n"
    if endpoint == "POST":
        body = json.dumps(POST_BODY)
        return (
            f"POST /v1/sessions HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n{body}"
        ).encode()
    path = "/v1/bench/baseline" if endpoint == "baseline" else f"/v1/sessions/{session_id}"
    return f"GET {path} HTTP/1.1\r\n{host}\r\n".encode()


def exchange(raw: bytes) -> None:
    """One request on its own connection, read to the end (a sync worker closes it after answering)."""
    with socket.create_connection(("127.0.0.1", GUNICORN_PORT), timeout=120) as connection:
        connection.sendall(raw)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    if not answer.startswith(b"HTTP/1.1 2"):
        raise SystemExit(f"gunicorn answered: {answer[:200]!r}")


def count_in_gunicorn(
    valgrind: str, endpoint: str, api_key: str, session_id: str, args, scratch: Path, out: Path
) -> int:
    """Instructions of `args.requests` requests in one gunicorn sync worker under callgrind (the master is
    traced too, as valgrind follows the fork; only the worker's counts are read)."""
    server = subprocess.Popen(
        [
            valgrind,
            "--tool=callgrind",
            "--trace-children=yes",
            "--instr-atstart=no",
            f"--callgrind-out-file={scratch}/gunicorn.%p",
            sys.executable,
            "-m",
            "gunicorn",
            "ageverify.wsgi",
            "--workers",
            "1",
            "--timeout",
            "600",
            "--bind",
            f"127.0.0.1:{GUNICORN_PORT}",
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        start_new_session=True,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(GUNICORN_PORT, timeout=300)  # slow to start under callgrind
        raw = raw_request(endpoint, api_key, session_id)
        for _ in range(args.warmup):
            exchange(raw)
        workers = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True).stdout.split()
        if len(workers) != 1:
            raise SystemExit(f"expected one gunicorn worker, found {workers}")
        worker = int(workers[0])
        instrumentation(worker, "on")
        for _ in range(args.requests):
            exchange(raw)
        instrumentation(worker, "off")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(120)
    shutil.copyfile(scratch / f"gunicorn.{worker}", out)
    return total_instructions(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="counted requests per endpoint")
    parser.add_argument("--warmup", type=int, default=100, help="uncounted requests first (imports, caches)")
    parser.add_argument(
        "--through",
        choices=("wsgi", "gunicorn"),
        default="wsgi",
        help="wsgi: the application called in-process (the service's own code only); "
        "gunicorn: a gunicorn worker served over loopback (its HTTP parsing counted too)",
    )
    parser.add_argument("--keep", metavar="DIR", help="keep each endpoint's callgrind file in DIR")
    parser.add_argument("--serve", nargs=3, metavar=("ENDPOINT", "KEY", "SESSION"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    prepare_environment(args)
    if args.serve:
        serve(*args.serve, warmup=args.warmup, requests=args.requests)
        return

    valgrind = ensure_debian_tool("valgrind")
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    ensure_database(fresh=args.own_database)
    import django

    django.setup()
    from django.test import Client

    from tenants.audit import Actor
    from tenants.services import tenant_create

    seed_sessions(20_000)
    api_key = tenant_create(actor=Actor(name="bench/api_instructions.py"), name="API instructions benchmark").live_key
    created = Client(HTTP_X_API_KEY=api_key).post("/v1/sessions", POST_BODY, content_type="application/json")
    assert created.status_code == 201, created.content
    session_id = created.json()["session"]["sessionId"]

    print(
        f"callgrind, through {args.through}: {args.warmup} requests uncounted, then {args.requests} counted, "
        "per endpoint",
        flush=True,
    )
    per_request = {}
    for endpoint in ENDPOINTS:
        per_request[endpoint] = count(valgrind, endpoint, api_key, session_id, args) / args.requests
        print(f"{endpoint:10} {per_request[endpoint]:12,.0f} instructions per request", flush=True)
    print("; ".join(f"baseline/{name} {per_request['baseline'] / per_request[name]:.2f}" for name in ENDPOINTS[1:]))


if __name__ == "__main__":
    main()
