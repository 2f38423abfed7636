"""Webhook benchmark: one Celery worker process delivering to local HTTPS receivers; latency and throughput.

Run by hand:  .venv/bin/python bench/webhooks.py [--latency-runs 200] [--burst 500] [--pool threads]
              [--concurrency 32] [--hanging 40] [--solo-burst 100] [--drains N]
Uses DATABASE_URL / REDIS_URL when set, else a bench database (created and migrated here) and Redis db 13.
Prints, for one worker process with the given pool (`--pool solo` is the pool before delivery ran
threads): the time from a session's final transition to the first attempt's arrival at idle (median,
p99; the target is p99 under 1 s), the deliveries per second on a burst to a fast receiver (queued
while the worker does not consume, then drained), and then
the same two while another tenant's receiver hangs on `--hanging` deliveries (answering only after
the total timeout): the healthy tenant's first-attempt latency and the deliveries/s with a hanging
receiver in the mix. First, in the same run, a solo-pool worker (one attempt at a time, as delivery ran
before the threads pool) takes a burst of `--solo-burst` to the fast receiver: the last lines compare the
pool's rate with a hanging receiver in the mix to that one, and to the fixed figure issue 13 started
from (TODAY_PER_PROCESS, measured before it; goal: 10 times). `--drains 0` queues one task per delivery,
as before a tenant's deliveries were sent by drains (webhooks.drains); the default is the setting's.
The receivers are this process's Python HTTPS servers, kept cheap (keep-alive, one write per answer)
so that they are not what limits the rate.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/ageverify_bench"
# Deliveries/s of one worker process to a local receiver when issue 13 was written (a solo worker).
TODAY_PER_PROCESS = 56


def prepare_environment(ca_bundle: Path, drains: int | None) -> dict:
    if drains is not None:  # for this process (it writes the deliveries) and the worker alike
        os.environ["WEBHOOK_TENANT_DRAINS"] = str(drains)
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-production-use")
    os.environ.setdefault("FLOW_SIGNING_KEY", "bench-only-flow-signing-key-not-for-production")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["WEBHOOK_ALLOW_PRIVATE_TARGETS"] = "1"  # the receiver is on loopback
    os.environ["WEBHOOK_CA_BUNDLE"] = str(ca_bundle)
    os.environ["DJANGO_SETTINGS_MODULE"] = "ageverify.settings"
    return dict(os.environ)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-runs", type=int, default=200, help="sessions finalized one at a time")
    parser.add_argument("--burst", type=int, default=500, help="sessions finalized in one transaction")
    parser.add_argument("--pool", default="threads", help="the worker's pool: threads (production) or solo")
    parser.add_argument("--concurrency", type=int, default=32, help="threads of the worker process")
    parser.add_argument("--hanging", type=int, default=40, help="deliveries to the hanging receiver (0: skip)")
    parser.add_argument(
        "--solo-burst",
        type=int,
        default=100,
        help="burst for the solo-pool comparison run before the main one (0: skip)",
    )
    parser.add_argument(
        "--queue",
        default=os.environ.get("BENCH_WORKER_QUEUES", "webhooks"),
        help="queues the worker consumes (-Q); default: webhooks, as a delivery worker is run "
        "(it then does without the broker's ack emulation, see ageverify/celery.py)",
    )
    parser.add_argument(
        "--drains", type=int, default=None, help="WEBHOOK_TENANT_DRAINS for this run (0: one queued task per delivery)"
    )
    args = parser.parse_args()

    from tests.support.receiver import Reply, WebhookReceiver, make_tls_files

    tls = make_tls_files(Path(tempfile.mkdtemp(prefix="ageverify-bench-")))
    env = prepare_environment(tls.ca_bundle, args.drains)
    from bench.api import ensure_database  # create the database if missing, then migrate

    ensure_database()

    import django

    django.setup()
    import redis
    from django.conf import settings
    from django.db import transaction

    from sessions_api.services import session_create
    from sessions_api.state_machine import session_cancel
    from tenants.audit import Actor
    from tenants.selectors import api_key_resolve
    from tenants.services import tenant_create
    from webhooks.models import WebhookDelivery

    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    receiver = WebhookReceiver(tls)
    url = receiver.url()
    onboarded = tenant_create(actor=Actor(name="bench/webhooks.py"), name="Bench", webhooks_enabled=True)
    api_key = api_key_resolve(onboarded.live_key)
    hanging_receiver = WebhookReceiver(tls)
    hanging_tenant = tenant_create(
        actor=Actor(name="bench/webhooks.py"), name="Bench (hanging receiver)", webhooks_enabled=True
    )
    hanging_key = api_key_resolve(hanging_tenant.live_key)

    def new_session_id(n: int, *, tenant=onboarded.tenant, key=api_key, target=url) -> str:
        created = session_create(
            tenant=tenant, api_key=key, subject=f"bench-{n}", age_limit=18, notification_url=target
        )
        return created.session.id

    def measure_latency(runs: int, offset: int) -> list[float]:
        receiver.reset()
        latencies = []
        for n in range(runs):
            session_id = new_session_id(offset + n)
            started = time.time()
            session_cancel(session_id=session_id)
            receiver.wait_for(n + 1, timeout=60)
            latencies.append(arrivals()[session_id] - started)
            time.sleep(0.02)  # idle between sessions: this measures latency, not queueing
        return latencies

    def measure_burst(offset: int, size: int | None = None) -> tuple[float, int]:
        size = size or args.burst
        receiver.reset()
        session_ids = [new_session_id(offset + n) for n in range(size)]
        # The burst's attempts are all queued while the worker does not take from the queue, then it drains
        # them: queued on the fly, one Redis round trip each from this one process, they arrived at about
        # 250/s, and the worker only kept pace with that (the rate measured was this script's, not the worker's).
        consuming(False)
        try:
            with transaction.atomic():
                for session_id in session_ids:
                    session_cancel(session_id=session_id)
        finally:
            consuming(True)
        receiver.wait_for(size, timeout=600)
        # From the first arrival to the last: the worker's rate, not the time this script takes to finalize
        # the sessions (the attempts are queued when that transaction commits).
        times = sorted(arrivals().values())
        elapsed = (times[-1] - times[0]) * size / (size - 1)
        time.sleep(0.5)
        delivered = WebhookDelivery.objects.filter(subject_ref__in=session_ids, status="delivered").count()
        return elapsed, delivered

    def arrivals() -> dict[str, float]:
        return {json.loads(r.body)["data"]["sessionId"]: r.arrived_at for r in list(receiver.received)}

    queues = ["-Q", args.queue] if args.queue else []
    worker_name = f"bench-webhooks@{socket.gethostname()}"

    def consuming(on: bool) -> None:
        """The worker takes attempts from the webhooks queue (on) or leaves them there (off); answers first."""
        from ageverify.celery import app

        control = app.control.add_consumer if on else app.control.cancel_consumer
        answers = control(settings.CELERY_TASK_DEFAULT_QUEUE, destination=[worker_name], reply=True, timeout=10)
        if not answers:
            raise SystemExit(f"the worker did not answer the {'add' if on else 'cancel'}_consumer command")

    def start_worker(pool: str, concurrency: int, warm_up_id: int) -> subprocess.Popen:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "ageverify",
                "worker",
                f"--pool={pool}",
                "-n",
                worker_name,
                f"--concurrency={concurrency}",
                *queues,
                "--without-heartbeat",
                "--without-mingle",
                "--without-gossip",
                "--loglevel=" + os.environ.get("BENCH_WORKER_LOGLEVEL", "WARNING"),
            ],
            cwd=REPO,
            env=env,
        )
        # Warm-up: the worker has started and imported everything once the first webhook arrives.
        receiver.reset()
        session_cancel(session_id=new_session_id(warm_up_id))
        receiver.wait_for(1, timeout=60)
        return worker

    solo_rate = None
    if args.solo_burst:
        solo = start_worker("solo", 1, -2)
        try:
            solo_elapsed, solo_delivered = measure_burst(50_000, args.solo_burst)
            solo_rate = args.solo_burst / solo_elapsed
        finally:
            solo.terminate()
            solo.wait(30)
        print(
            f"solo pool (one attempt at a time), burst of {args.solo_burst} to a fast receiver: "
            f"{solo_rate:.0f} deliveries/s ({solo_elapsed:.2f} s; {solo_delivered} recorded delivered)",
            flush=True,
        )

    release_hanging = None
    worker = start_worker(args.pool, args.concurrency, -1)
    try:
        latencies = measure_latency(args.latency_runs, 0)
        elapsed, delivered = measure_burst(10_000)

        if args.hanging:
            # The other tenant's receiver holds every request until the sender's total timeout ends it.
            import threading

            release_hanging = threading.Event()
            hanging_receiver.script(*[Reply(hold=release_hanging)] * (args.hanging * 3))  # retries hang too
            with transaction.atomic():
                for n in range(args.hanging):
                    session_cancel(
                        session_id=new_session_id(
                            20_000 + n, tenant=hanging_tenant.tenant, key=hanging_key, target=hanging_receiver.url()
                        )
                    )
            hanging_receiver.wait_for(1, timeout=60)
            hanging_latencies = measure_latency(max(20, args.latency_runs // 4), 30_000)
            hanging_elapsed, hanging_delivered = measure_burst(40_000)
            hung_requests = len(hanging_receiver.received)
    finally:
        if release_hanging is not None:
            release_hanging.set()
        worker.terminate()
        worker.wait(30)
        receiver.close()
        hanging_receiver.close()

    pool = f"{args.pool} pool" + (f", {args.concurrency} threads" if args.pool == "threads" else "")

    def latency_line(values: list[float]) -> str:
        ms = [value * 1000 for value in values]
        return (
            f"median {statistics.median(ms):.1f} ms, p99 {percentile(ms, 0.99):.1f} ms, max {max(ms):.1f} ms "
            f"(target p99 < 1000 ms: {'met' if percentile(ms, 0.99) < 1000 else 'NOT met'})"
        )

    drains = (
        f"each tenant's deliveries sent by up to {settings.WEBHOOK_TENANT_DRAINS} drains"
        if settings.WEBHOOK_TENANT_DRAINS
        else "one queued task per delivery"
    )
    print(f"one worker process ({pool}; {drains}):")
    print(f"first attempt after the final transition, {len(latencies)} sessions at idle: {latency_line(latencies)}")
    print(
        f"burst of {args.burst} to a fast receiver: {args.burst / elapsed:.0f} deliveries/s "
        f"({elapsed:.2f} s; {delivered} recorded delivered)"
    )
    if args.hanging:
        print(
            f"with another tenant's receiver hanging on {args.hanging} deliveries "
            f"({hung_requests} of them held open at the end):"
        )
        print(f"  healthy tenant's first attempt, {len(hanging_latencies)} sessions: {latency_line(hanging_latencies)}")
        print(
            f"  burst of {args.burst} to the fast receiver: {args.burst / hanging_elapsed:.0f} deliveries/s "
            f"({hanging_elapsed:.2f} s; {hanging_delivered} recorded delivered)"
        )
    rate = args.burst / (hanging_elapsed if args.hanging else elapsed)
    mix = "with a hanging receiver in the mix" if args.hanging else "to the fast receiver only"
    if solo_rate:
        print(
            f"per worker process, {pool} {mix}: {rate:.0f} deliveries/s = {rate / solo_rate:.1f} x the solo "
            f"pool's {solo_rate:.0f}/s measured above (goal: 10 x)"
        )
    print(
        f"per worker process, {pool} {mix}: {rate:.0f} deliveries/s = {rate / TODAY_PER_PROCESS:.1f} x issue 13's "
        f"{TODAY_PER_PROCESS}/s measured before it (goal: 10 x)"
    )


if __name__ == "__main__":
    main()
