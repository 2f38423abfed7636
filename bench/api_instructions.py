"""CPU instructions per API request (baseline, GET, POST), counted by callgrind: a measure the machine's load does not move.

Run by hand:  .venv/bin/python bench/api_instructions.py [--requests 200] [--warmup 100]

bench/api.py measures throughput, which on a shared machine moves with whatever else runs on it (its
ratios moved by a tenth between runs of one day). This counts what the service itself executes for one
request: each endpoint runs in its own Python process under `valgrind --tool=callgrind` (Debian's
package; installed here if missing), which serves --warmup requests uncounted, then --requests counted
ones, through the WSGI application gunicorn calls (the same settings overlay, middleware, database and
Redis as bench/api.py). Not counted: gunicorn's HTTP parsing and the sockets (the same for every
endpoint), PostgreSQL and Redis themselves, and the kernel. Prints instructions per request and the
baseline's count over each endpoint's: a ratio of work, which the throughput ratios follow when the
CPU is what limits them.
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.api import POST_BODY, ensure_database, ensure_debian_tool, prepare_environment, seed_sessions  # noqa: E402

ENDPOINTS = ("baseline", "GET", "POST")


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
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": "", "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "16600", "HTTP_HOST": "127.0.0.1:16600", "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1", "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(data),
            "wsgi.errors": sys.stderr, "CONTENT_LENGTH": str(len(data)), "CONTENT_TYPE": "application/json",
            "HTTP_X_API_KEY": api_key,
        }
        status = []
        chunks = application(environ, lambda line, headers, exc_info=None: status.append(line))
        b"".join(chunks)
        chunks.close()
        if not status[0].startswith("2"):
            raise SystemExit(f"{endpoint}: {status[0]}")

    def instrumentation(state: str) -> None:
        subprocess.run(["callgrind_control", f"--instr={state}", str(os.getpid())], check=True, capture_output=True)

    for _ in range(warmup):
        call()
    instrumentation("on")
    for _ in range(requests):
        call()
    instrumentation("off")


def count(valgrind: str, endpoint: str, api_key: str, session_id: str, args) -> int:
    with tempfile.TemporaryDirectory(prefix="ageverify-callgrind-") as scratch:
        out = Path(scratch) / "callgrind.out"
        subprocess.run(
            [valgrind, "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
             sys.executable, __file__, "--serve", endpoint, api_key, session_id,
             "--warmup", str(args.warmup), "--requests", str(args.requests)],
            cwd=REPO, check=True, stderr=subprocess.DEVNULL,
        )
        totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
        return int(totals[-1].split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="counted requests per endpoint")
    parser.add_argument("--warmup", type=int, default=100, help="uncounted requests first (imports, caches)")
    parser.add_argument("--serve", nargs=3, metavar=("ENDPOINT", "KEY", "SESSION"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    prepare_environment(args)
    if args.serve:
        serve(*args.serve, warmup=args.warmup, requests=args.requests)
        return

    valgrind = ensure_debian_tool("valgrind")
    ensure_database(fresh=args.own_database)
    import django

    django.setup()
    from django.test import Client

    from tenants.services import tenant_create

    seed_sessions(20_000)
    api_key = tenant_create(name="API instructions benchmark").live_key
    created = Client(HTTP_X_API_KEY=api_key).post("/v1/sessions", POST_BODY, content_type="application/json")
    assert created.status_code == 201, created.content
    session_id = created.json()["session"]["sessionId"]

    print(f"callgrind: {args.warmup} requests uncounted, then {args.requests} counted, per endpoint", flush=True)
    per_request = {}
    for endpoint in ENDPOINTS:
        per_request[endpoint] = count(valgrind, endpoint, api_key, session_id, args) / args.requests
        print(f"{endpoint:10} {per_request[endpoint]:12,.0f} instructions per request", flush=True)
    print("; ".join(f"baseline/{name} {per_request['baseline'] / per_request[name]:.2f}" for name in ENDPOINTS[1:]))


if __name__ == "__main__":
    main()
