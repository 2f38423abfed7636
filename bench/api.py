"""API benchmark: GET and POST /v1/sessions against a baseline view, on gunicorn as production runs it.

Run by hand:  .venv/bin/python bench/api.py [--rounds 7] [--duration 8] [--connections 32] [--workers N]

Starts `gunicorn ageverify.wsgi` (the README's production command, plain HTTP on loopback; its sync workers
from gunicorn.conf.py, two per core plus one, unless --workers)
with the settings overlay bench/api_settings.py, which only adds /v1/bench/baseline: the same middleware
stack, a SHA-256 of the X-API-Key header and one PostgreSQL round trip, returning a small JSON body.
wrk (Debian's package; installed here if missing) drives baseline, GET and POST in interleaved rounds;
the rate limit is raised out of the way. Prints per round and the medians: requests/s, p50/p99, the
ratios GET/baseline and POST/baseline (goals 0.85 and 0.70), SQL queries per request, and errors
(any non-2xx answer or socket error fails the run).
--cpu adds where each endpoint's CPU time goes, in microseconds per request: gunicorn's workers,
PostgreSQL, Redis, wrk, and the kernel's work no process is charged with (interrupts), read from /proc
around every run (clock ticks: a reading, not a count; for exact in-process work see
bench/api_instructions.py).
Uses DATABASE_URL / REDIS_URL when set, else the database av_perf_bench (dropped, created and migrated
here at every run: each run meets the same tables, not the sessions earlier runs created) and Redis db 6.
The sessions table is first filled to --seed-sessions rows, vacuumed and analyzed, then a CHECKPOINT
(see seed_sessions).
Absolute numbers depend on the machine's load; the ratios of one run are what compare.
"""

import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/av_perf_bench"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/6"
GOALS = {"GET": 0.85, "POST": 0.70}
POST_BODY = {"subject": "bench-user", "age_limit": 18, "callback_url": "https://partner.example/verified"}


def prepare_environment(args) -> dict:
    # The benchmark's own database starts anew each run, so that every run meets the same tables; a
    # database given in DATABASE_URL is only migrated and topped up (seed_sessions).
    args.own_database = "DATABASE_URL" not in os.environ
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ.setdefault("REDIS_URL", DEFAULT_REDIS_URL)
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use")
    os.environ.setdefault("FLOW_SIGNING_KEY", "bench-only-flow-signing-key-not-for-production")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DEBUG"] = ""  # production settings: DEBUG on would also record every query
    # The limiter still runs (its Redis round trip is part of the cost), it just never refuses.
    os.environ["API_RATE_LIMIT_PER_SECOND"] = "1000000"
    os.environ["API_RATE_LIMIT_BURST"] = "1000000"
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.api_settings"
    return dict(os.environ)


def ensure_debian_tool(command: str) -> str:
    """The path of `command`, installed from Debian's package of the same name if missing."""
    if shutil.which(command) is None:
        print(f"== apt: installing {command}", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", command],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
    return shutil.which(command)


def ensure_database(*, fresh: bool = False) -> None:
    """Create the database if missing (dropped first when `fresh`), then migrate it."""
    import psycopg
    from psycopg import sql

    url = os.environ["DATABASE_URL"]
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        if fresh:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, check=True)


def wait_for_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"gunicorn did not answer on port {port}")


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * _UNITS[unit]


def parse_wrk(output: str) -> dict:
    """Requests/s, p50 and p99 in ms, and the errors wrk saw (non-2xx/3xx answers, socket errors)."""
    result = {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
        "p50": _ms(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1)),
        "p99": _ms(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1)),
        "requests": int(re.search(r"(\d+) requests in", output).group(1)),
        "errors": 0,
    }
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if non_2xx:
        result["errors"] += int(non_2xx.group(1))
    sockets = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output)
    if sockets:
        result["errors"] += sum(int(n) for n in sockets.groups())
    return result


def wrk_script(path: Path, method: str, headers: dict, body: str | None) -> Path:
    lines = [f'wrk.method = "{method}"']
    lines += [f'wrk.headers["{name}"] = "{value}"' for name, value in headers.items()]
    if body is not None:
        lines.append(f"wrk.body = {json.dumps(body)}")
    path.write_text("\n".join(lines) + "\n")
    return path


_CPU_GROUPS = ("gunicorn user", "gunicorn sys", "postgres", "redis", "wrk", "other", "unassigned")


def cpu_snapshot(server_pgid: int) -> dict[str, int]:
    """Clock ticks used so far by each group of processes alive now, and by the whole machine ("busy").

    wrk is not alive before or after its run: its ticks are those of the finished children (getrusage).
    """
    ticks = dict.fromkeys(_CPU_GROUPS, 0)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    ticks["wrk"] = round((children.ru_utime + children.ru_stime) * os.sysconf("SC_CLK_TCK"))
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                text = stat.read()
        except OSError:  # ended meanwhile
            continue
        comm = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        user, system = int(fields[11]), int(fields[12])  # utime, stime
        if int(fields[2]) == server_pgid:
            ticks["gunicorn user"] += user
            ticks["gunicorn sys"] += system
        else:
            group = "postgres" if comm.startswith("postgres") else "redis" if comm.startswith("redis") else "other"
            ticks[group] += user + system
    with open("/proc/stat") as stat:
        user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, stat.readline().split()[1:9])
    ticks["busy"] = user + nice + system + irq + softirq + steal
    return ticks


def cpu_per_request(before: dict, after: dict, requests: int) -> dict[str, float]:
    """Microseconds of CPU per request by group between two snapshots; "unassigned" is busy time no process got."""
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK")
    used = {group: max(after[group] - before[group], 0) for group in _CPU_GROUPS if group != "unassigned"}
    used["unassigned"] = max((after["busy"] - before["busy"]) - sum(used.values()), 0)
    return {group: used[group] * tick_us / max(requests, 1) for group in _CPU_GROUPS}


def run_wrk(wrk: str, url: str, script: Path, args) -> dict:
    command = [
        wrk,
        "-t",
        str(args.threads),
        "-c",
        str(args.connections),
        "-d",
        f"{args.duration}s",
        "--timeout",
        "5s",
        "--latency",
        "-s",
        str(script),
        url,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, check=True)
    return parse_wrk(completed.stdout)


def queries_per_request(api_key: str, session_id: str, samples: int = 20) -> dict[str, float]:
    """SQL queries of one request of each kind, counted in-process through Django's test client."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_X_API_KEY=api_key)
    calls = {
        "baseline": lambda: client.get("/v1/bench/baseline"),
        "GET": lambda: client.get(f"/v1/sessions/{session_id}"),
        "POST": lambda: client.post("/v1/sessions", POST_BODY, content_type="application/json"),
    }
    counts = {}
    for name, call in calls.items():
        call()  # the first call may write the key's last-used time; steady state is what counts
        with CaptureQueriesContext(connection) as captured:
            for _ in range(samples):
                response = call()
                assert response.status_code < 300, (name, response.status_code, response.content[:300])
        counts[name] = len(captured.captured_queries) / samples
    return counts


def seed_sessions(at_least: int) -> int:
    """Fill the sessions table to `at_least` rows of another tenant, then VACUUM ANALYZE.

    A steady state, not a new database.

    The hot reads are prepared statements, planned once per connection. Planned on an all but empty
    table (a freshly migrated database, where nothing has been analyzed yet) the session read scans the
    whole table, and keeps doing so while the POST rounds grow it, until its connection is replaced
    (DATABASE_CONN_MAX_AGE) or autovacuum's ANALYZE invalidates the plan. In production both happen
    within a minute; the benchmark measures the steady state instead of that first minute.
    """
    from django.db import connection
    from django.utils import timezone

    from sessions_api.models import VerificationSession
    from tenants.audit import Actor
    from tenants.services import tenant_create

    missing = at_least - VerificationSession.objects.count()
    if missing > 0:
        tenant = tenant_create(actor=Actor(name="bench/api.py"), name="API benchmark (other sessions)").tenant
        now = timezone.now()
        VerificationSession.objects.bulk_create(
            (
                VerificationSession(
                    tenant=tenant,
                    mode="live",
                    subject=f"seed-{n}",
                    age_limit=18,
                    token_hash=f"{n:064x}",
                    expires_at=now,
                )
                for n in range(missing)
            ),
            batch_size=5000,
        )
    with connection.cursor() as cursor:
        # VACUUM as well: autovacuum would otherwise visit the new rows during the first rounds. Then a
        # checkpoint, so that the setup's writes (a new database, its migrations, the seed) are on disk
        # before measuring, not flushed by the checkpointer while the first rounds run.
        cursor.execute("VACUUM ANALYZE")
        cursor.execute("CHECKPOINT")
    return max(missing, 0)


def production_workers(env: dict) -> int:
    """The sync workers gunicorn.conf.py gives the README's command: two per core plus one, or WEB_CONCURRENCY."""
    printed = subprocess.run(
        [sys.executable, "-m", "gunicorn", "ageverify.wsgi", "--print-config"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return int(re.search(r"^workers\s*=\s*(\d+)$", printed, re.MULTILINE).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved baseline/GET/POST rounds")
    parser.add_argument("--duration", type=int, default=8, help="seconds of each wrk run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1, help="wrk threads (one leaves the CPU to the server)")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="gunicorn sync workers (default: gunicorn.conf.py's, as the README's command runs)",
    )
    parser.add_argument("--port", type=int, default=16600)
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="also print CPU microseconds per request by process group (gunicorn, PostgreSQL...)",
    )
    parser.add_argument(
        "--seed-sessions",
        type=int,
        default=20_000,
        help="sessions in the table before measuring (added if fewer), then VACUUM ANALYZE",
    )
    args = parser.parse_args()

    wrk = ensure_debian_tool("wrk")
    env = prepare_environment(args)
    ensure_database(fresh=args.own_database)
    if not port_is_free(args.port):
        raise SystemExit(f"port {args.port} is taken: pass --port")

    import django

    django.setup()
    import redis
    from django.conf import settings

    from tenants.audit import Actor
    from tenants.services import tenant_create

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    seeded = seed_sessions(args.seed_sessions)
    api_key = tenant_create(actor=Actor(name="bench/api.py"), name="API benchmark").live_key
    counts_key = tenant_create(actor=Actor(name="bench/api.py"), name="API benchmark (query counts)").live_key

    from django.test import Client

    created = Client(HTTP_X_API_KEY=api_key).post("/v1/sessions", POST_BODY, content_type="application/json")
    assert created.status_code == 201, created.content
    session_id = created.json()["session"]["sessionId"]
    counts_session = Client(HTTP_X_API_KEY=counts_key).post("/v1/sessions", POST_BODY, content_type="application/json")
    queries = queries_per_request(counts_key, counts_session.json()["session"]["sessionId"])

    scripts = Path(tempfile.mkdtemp(prefix="ageverify-bench-api-"))
    base = f"http://127.0.0.1:{args.port}"
    key_header = {"X-API-Key": api_key}
    targets = {
        "baseline": (f"{base}/v1/bench/baseline", wrk_script(scripts / "baseline.lua", "GET", key_header, None)),
        "GET": (f"{base}/v1/sessions/{session_id}", wrk_script(scripts / "get.lua", "GET", key_header, None)),
        "POST": (
            f"{base}/v1/sessions",
            wrk_script(
                scripts / "post.lua", "POST", {**key_header, "Content-Type": "application/json"}, json.dumps(POST_BODY)
            ),
        ),
    }

    if args.workers is not None:
        env["WEB_CONCURRENCY"] = str(args.workers)
    workers = production_workers(env)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "ageverify.wsgi",
            "--bind",
            f"127.0.0.1:{args.port}",
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env=env,
        start_new_session=True,
    )
    results: dict[str, list[dict]] = {name: [] for name in targets}
    try:
        wait_for_port(args.port)
        print(f"sessions table: {args.seed_sessions} or more rows ({seeded} added), analyzed", flush=True)
        print(
            f"gunicorn: {workers} sync workers on port {args.port}; wrk: {args.threads} thread(s), "
            f"{args.connections} connections, {args.duration} s per run, {args.rounds} rounds",
            flush=True,
        )
        print(
            "a creation commits "
            + (
                "waiting for the disk (SESSION_CREATE_WAIT_FOR_DISK on)"
                if settings.SESSION_CREATE_WAIT_FOR_DISK
                else "without waiting for the disk (SESSION_CREATE_WAIT_FOR_DISK off)"
            ),
            flush=True,
        )
        for url, script in targets.values():  # warm-up: imports, connections, caches
            run_wrk(wrk, url, script, argparse.Namespace(**{**vars(args), "duration": 2}))
        for round_number in range(args.rounds):
            # The order turns each round so no endpoint always follows the same one.
            names = list(targets)
            names = names[round_number % 3 :] + names[: round_number % 3]
            row = []
            for name in names:
                url, script = targets[name]
                before = cpu_snapshot(server.pid) if args.cpu else None
                result = run_wrk(wrk, url, script, args)
                if args.cpu:
                    result["cpu"] = cpu_per_request(before, cpu_snapshot(server.pid), result["requests"])
                results[name].append(result)
                row.append(
                    f"{name} {result['rps']:.0f}/s p50 {result['p50']:.1f} p99 {result['p99']:.1f} ms"
                    + (f" ERRORS {result['errors']}" if result["errors"] else "")
                )
            print(f"round {round_number + 1}: " + "; ".join(row), flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)

    print()
    print(
        f"{'endpoint':10} {'requests/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'ratio':>6} {'goal':>6} "
        f"{'SQL/req':>7} {'errors':>6}"
    )
    errors = 0
    verdicts = []
    for name, runs in results.items():
        rps = statistics.median(r["rps"] for r in runs)
        ratios = [r["rps"] / b["rps"] for r, b in zip(runs, results["baseline"])]
        ratio = statistics.median(ratios)
        run_errors = sum(r["errors"] for r in runs)
        errors += run_errors
        goal = GOALS.get(name)
        print(
            f"{name:10} {rps:10.0f} {statistics.median(r['p50'] for r in runs):8.1f} "
            f"{statistics.median(r['p99'] for r in runs):8.1f} {ratio:6.2f} {goal or '':>6} "
            f"{queries[name]:7.1f} {run_errors:6d}"
        )
        if goal is not None:
            verdicts.append(f"{name} {ratio:.2f} of baseline (goal {goal}: {'met' if ratio >= goal else 'NOT met'})")
    print("; ".join(verdicts) + f"; errors: {errors}")
    print("(ratio: median over rounds of the endpoint's requests/s over the baseline's in the same round)")
    if args.cpu:
        print()
        print(
            "CPU microseconds per request, median over rounds "
            "(from /proc; 'unassigned': interrupts and other kernel work)"
        )
        print(f"{'endpoint':10} " + " ".join(f"{group:>13}" for group in _CPU_GROUPS) + f" {'total':>10}")
        for name, runs in results.items():
            medians = {group: statistics.median(r["cpu"][group] for r in runs) for group in _CPU_GROUPS}
            total = statistics.median(sum(r["cpu"].values()) for r in runs)
            print(f"{name:10} " + " ".join(f"{medians[group]:13.0f}" for group in _CPU_GROUPS) + f" {total:10.0f}")
    if errors:
        raise SystemExit(f"{errors} requests failed")


if __name__ == "__main__":
    main()
