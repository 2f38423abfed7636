"""Webhook benchmark: one Celery worker delivering to a local HTTPS receiver; latency and throughput.

Run by hand:  .venv/bin/python bench/webhooks.py [--latency-runs 200] [--burst 500]
Uses DATABASE_URL / REDIS_URL when set, else a bench database (created and migrated here) and Redis db 13.
Prints the time from a session's final transition to the first attempt's arrival (median, p99; the
target is p99 under 1 s at idle) and the deliveries per second of one worker (solo pool) on a burst.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/ageverify_bench"


def prepare_environment(ca_bundle: Path) -> dict:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")
    os.environ.setdefault("SECRET_KEY", "bench-secret-key")
    os.environ.setdefault("FLOW_SIGNING_KEY", "bench-flow-signing-key")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["WEBHOOK_ALLOW_PRIVATE_TARGETS"] = "1"  # the receiver is on loopback
    os.environ["WEBHOOK_CA_BUNDLE"] = str(ca_bundle)
    os.environ["DJANGO_SETTINGS_MODULE"] = "ageverify.settings"
    return dict(os.environ)


def ensure_database() -> None:
    import psycopg
    from psycopg import sql

    url = os.environ["DATABASE_URL"]
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, check=True)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-runs", type=int, default=200, help="sessions finalized one at a time")
    parser.add_argument("--burst", type=int, default=500, help="sessions finalized in one transaction")
    args = parser.parse_args()

    from tests.support.receiver import WebhookReceiver, make_tls_files

    tls = make_tls_files(Path(tempfile.mkdtemp(prefix="ageverify-bench-")))
    env = prepare_environment(tls.ca_bundle)
    ensure_database()

    import django

    django.setup()
    import redis
    from django.conf import settings
    from django.db import transaction

    from sessions_api.services import session_create
    from sessions_api.state_machine import session_cancel
    from tenants.selectors import api_key_resolve
    from tenants.services import tenant_create
    from webhooks.models import WebhookDelivery

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    receiver = WebhookReceiver(tls)
    url = receiver.url()
    onboarded = tenant_create(name="Bench", webhooks_enabled=True)
    api_key = api_key_resolve(onboarded.live_key)

    def new_session_id(n: int) -> str:
        created = session_create(tenant=onboarded.tenant, api_key=api_key, subject=f"bench-{n}", age_limit=18,
                                 notification_url=url)
        return created.session.id

    def arrivals() -> dict[str, float]:
        return {json.loads(r.body)["data"]["sessionId"]: r.arrived_at for r in list(receiver.received)}

    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "ageverify", "worker", "--pool=solo", "--without-heartbeat",
         "--without-mingle", "--without-gossip", "--loglevel=" + os.environ.get("BENCH_WORKER_LOGLEVEL", "WARNING")],
        cwd=REPO, env=env,
    )
    try:
        # Warm-up: the worker has started and imported everything once the first webhook arrives.
        session_cancel(session_id=new_session_id(-1))
        receiver.wait_for(1, timeout=60)
        receiver.reset()

        latencies = []
        for n in range(args.latency_runs):
            session_id = new_session_id(n)
            started = time.time()
            session_cancel(session_id=session_id)
            receiver.wait_for(n + 1, timeout=30)
            latencies.append(arrivals()[session_id] - started)
            time.sleep(0.02)  # idle between sessions: this measures latency, not queueing
        receiver.reset()

        session_ids = [new_session_id(10_000 + n) for n in range(args.burst)]
        started = time.time()
        with transaction.atomic():
            for session_id in session_ids:
                session_cancel(session_id=session_id)
        receiver.wait_for(args.burst, timeout=600)
        elapsed = max(arrivals().values()) - started
        time.sleep(0.5)
        delivered = WebhookDelivery.objects.filter(subject_ref__in=session_ids, status="delivered").count()
    finally:
        worker.terminate()
        worker.wait(30)
        receiver.close()

    ms = [latency * 1000 for latency in latencies]
    print(f"first attempt after the final transition, {len(ms)} sessions at idle: "
          f"median {statistics.median(ms):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms "
          f"(target p99 < 1000 ms: {'met' if percentile(ms, 0.99) < 1000 else 'NOT met'})")
    print(f"one worker (solo pool), burst of {args.burst}: {args.burst / elapsed:.0f} deliveries/s "
          f"({elapsed:.2f} s; {delivered} recorded delivered, {len(receiver.received)} requests received)")


if __name__ == "__main__":
    main()
