"""Analysis flood (issue 28): another tenant's document decision while one address uploads crafted documents.

Run by hand:  .venv/bin/python bench/analysis_flood.py [--seconds 40] [--attackers 2]

Starts gunicorn (3 workers) and one Celery worker on every queue, as the README runs them. Two tenants:
the attacker's sessions (tenant A), from one address, post document uploads of two tiny (about 650-byte) JPEGs whose
headers claim 4999x4990 (front and back), again and again; meanwhile tenant B's user posts an ordinary
passport page every few seconds and the bench times each one from the upload to the decision (the session
leaving `processing`, read through GET /v1/sessions/{id}). Prints tenant B's p50 / max decision time
(target: under 2 s) and what the attackers' uploads were answered.
Each browser's address reaches the service as a trusted proxy reports it (X-Forwarded-For): the attacker's
processes share one, tenant B's user has another, so the flow's per-address upload limit applies as behind
the production proxy; --no-address-limit lifts it, and every crafted upload then reaches the upload checks.
Uses DATABASE_URL / REDIS_URL when set, else the database av_upload_flood and Redis db 5 (bench/upload_flood.py).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

import requests

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.upload_flood import Browser, _csrf, _prepare, camera_frame, create_session, lying_jpeg  # noqa: E402

ATTACKER_ADDRESS = "203.0.113.7"  # one address for every attacker process (documentation range, RFC 5737)
USER_ADDRESS = "198.51.100.23"  # tenant B's user


@cache
def passport_page() -> bytes:
    from tests.support.documents import encode, mrz_card, td3_lines

    return encode(mrz_card(td3_lines(birth="900101", expiry="350101"), dpi=200))


def document_step(base: str, api_key: str, address: str) -> tuple[Browser, dict, str]:
    """A browser from `address` on a fresh live session's document page: (browser, the page's form fields, session
    id)."""
    created = create_session(base, api_key)
    browser = Browser(address)
    parts = urlsplit(created["verificationUrl"])
    browser.get(f"{base}{parts.path}?{parts.query}", timeout=30, allow_redirects=False)
    page = browser.get(f"{base}/flow/consent", timeout=60).text
    if "csrfmiddlewaretoken" not in page:  # the face path is on: the consent page links to the selfie page
        page = browser.get(f"{base}/flow/selfie", timeout=60).text
    browser.post(f"{base}/flow/no-camera", data={"csrfmiddlewaretoken": _csrf(page)}, timeout=60)
    page = browser.get(f"{base}/flow/document", timeout=60, allow_redirects=False).text
    form = {"csrfmiddlewaretoken": _csrf(page)}
    challenge = re.search(r'name="challenge" value="([^"]*)"', page)
    frames = []
    if challenge:  # the presence policy asks for head turns with the document
        steps = challenge.group(1).split(",")
        form["challenge"] = ",".join(steps)
        for index, step in enumerate(steps):
            frames += [(f"frame_{index}_{step}", (f"{step}.jpg", camera_frame(), "image/jpeg"))] * 3
    return browser, {"form": form, "frames": frames}, created["sessionId"]


def _attack(base: str, api_key: str, until: float, outcomes) -> None:
    counts: Counter = Counter()
    crafted = [
        ("document", ("front.jpg", lying_jpeg(4999, 4990), "image/jpeg")),
        ("document_back", ("back.jpg", lying_jpeg(4999, 4990), "image/jpeg")),
    ]
    while time.monotonic() < until:
        try:
            browser, step, _ = document_step(base, api_key, ATTACKER_ADDRESS)
        except Exception:
            counts["session_open_failed"] += 1
            time.sleep(0.5)
            continue
        for _ in range(12):
            if time.monotonic() >= until:
                break
            try:
                response = browser.post(
                    f"{base}/flow/document",
                    data=step["form"],
                    files=crafted + step["frames"],
                    timeout=120,
                    allow_redirects=False,
                )
            except requests.RequestException:
                counts["error"] += 1
                continue
            counts[str(response.status_code)] += 1
            if response.status_code not in (400, 429):
                break  # taken for analysis (303), or the session ended: a new one
    outcomes.put(dict(counts))


def decision_time(base: str, api_key: str) -> float | None:
    """Seconds from tenant B's document upload to its decision, or None if none came within 120 s."""
    browser, step, session_id = document_step(base, api_key, USER_ADDRESS)
    files = [("document", ("passport.jpg", passport_page(), "image/jpeg"))] + step["frames"]
    started = time.monotonic()
    response = browser.post(f"{base}/flow/document", data=step["form"], files=files, timeout=120, allow_redirects=False)
    if response.status_code != 303:
        raise RuntimeError(f"tenant B's upload was answered {response.status_code}")
    while time.monotonic() - started < 120:
        status = requests.get(f"{base}/v1/sessions/{session_id}", headers={"X-API-Key": api_key}, timeout=30)
        if status.json()["session"]["status"] != "processing":
            return time.monotonic() - started
        time.sleep(0.05)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--attackers", type=int, default=2, help="attacker processes, all from one address")
    parser.add_argument("--port", type=int, default=16521)
    parser.add_argument(
        "--no-address-limit",
        action="store_true",
        help="lift the flow's per-address upload limit: the attacker's uploads all reach the upload checks",
    )
    args = parser.parse_args()
    env = _prepare()
    # Each browser's address comes as a trusted proxy reports it, so the attacker and tenant B's user have
    # their own upload budgets, as behind the production proxy.
    env["DASHBOARD_LOGIN_TRUSTED_PROXIES"] = "1"
    if args.no_address_limit:
        env["FLOW_UPLOAD_RATE_PER_ADDRESS"] = env["FLOW_UPLOAD_BURST_PER_ADDRESS"] = "100000"
    base = f"http://127.0.0.1:{args.port}"
    env["PUBLIC_BASE_URL"] = base

    def tenant(name: str) -> str:
        out = subprocess.run(
            [sys.executable, "manage.py", "create_tenant", name], cwd=REPO, env=env, check=True, capture_output=True
        )
        return json.loads(out.stdout)["api_key"]

    attacker_key, victim_key = tenant("Flood attacker"), tenant("Flood victim")
    bin_dir = Path(sys.executable).parent
    processes = [
        subprocess.Popen(
            [str(bin_dir / "gunicorn"), "ageverify.wsgi", "--bind", f"127.0.0.1:{args.port}", "--workers", "3"],
            cwd=REPO,
            env=env,
        ),
        subprocess.Popen(
            [str(bin_dir / "celery"), "-A", "ageverify", "worker", "--loglevel=WARNING"], cwd=REPO, env=env
        ),
    ]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                requests.get(f"{base}/healthz", timeout=1)
                break
            except requests.RequestException:
                time.sleep(0.2)
        quiet = [decision_time(base, victim_key) for _ in range(3)]  # the first loads the models
        print("quiet: tenant B decision s", [round(value, 2) for value in quiet if value is not None], flush=True)
        context = multiprocessing.get_context("fork")
        outcomes = context.Queue()
        until = time.monotonic() + args.seconds
        attackers = [
            context.Process(target=_attack, args=(base, attacker_key, until, outcomes), daemon=True)
            for _ in range(args.attackers)
        ]
        for process in attackers:
            process.start()
        time.sleep(2)  # the flood is under way
        times: list[float | None] = []
        while time.monotonic() < until:
            times.append(decision_time(base, victim_key))
            time.sleep(1)
        uploads: Counter = Counter()
        for _ in attackers:
            uploads.update(outcomes.get(timeout=150))
        decided = sorted(value for value in times if value is not None)
        print(
            "flooded:",
            json.dumps(
                {
                    "attackers": args.attackers,
                    "seconds": args.seconds,
                    "tenant_b_decisions": len(times),
                    "tenant_b_undecided_after_120s": len(times) - len(decided),
                    "tenant_b_p50_s": round(statistics.median(decided), 2) if decided else None,
                    "tenant_b_max_s": round(max(decided), 2) if decided else None,
                    "attacker_uploads_by_status": dict(sorted(uploads.items())),
                }
            ),
            flush=True,
        )
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


if __name__ == "__main__":
    main()
