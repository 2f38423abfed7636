"""Analysis flood (issues 28, 45): other users' document decisions while one address uploads crafted documents.

Run by hand:  .venv/bin/python bench/analysis_flood.py [--seconds 40] [--attackers 2] [--pictures all]

Starts gunicorn (3 workers) and one Celery worker on every queue, as the README runs them. Two tenants:
the attacker's sessions (tenant A), from one address, post document uploads of crafted pictures (front and
back), again and again, taking the variants of --pictures in turn (bench/decode_costs.py names them: the
issue 28 lying JPEG, the issue 45 WebP, PNGs and JPEGs that cost more than they weigh; `all`, the default,
is every one); meanwhile tenant B's user and another user of tenant A, each from an address of their own,
post an ordinary passport page in turn, and the bench times each one from the upload to the decision (the
session leaving `processing`, read through GET /v1/sessions/{id}). Prints each one's p50 / max decision
time and how many took over 5 s (target: none), and what the attackers' uploads were answered.
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

from bench.upload_flood import Browser, _csrf, _prepare, camera_frame, create_session  # noqa: E402

ATTACKER_ADDRESS = "203.0.113.7"  # one address for every attacker process (documentation range, RFC 5737)
USER_ADDRESS = "198.51.100.23"  # tenant B's user
NEIGHBOUR_ADDRESS = "198.51.100.71"  # another user of tenant A, the attacker's tenant
TARGET_SECONDS = 5


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


def crafted_uploads(names: list[str]) -> list[list[tuple[str, tuple]]]:
    """For each variant, the document form's two picture fields (front and back), named as their format."""
    from bench.decode_costs import crafted
    from checks.images import sniff_format

    uploads = []
    for name in names:
        data = crafted()[name][1]()
        extension = {"JPEG": "jpg", "PNG": "png", "WEBP": "webp"}[sniff_format(data)]
        kind = "jpeg" if extension == "jpg" else extension
        uploads.append(
            [(field, (f"{field}.{extension}", data, f"image/{kind}")) for field in ("document", "document_back")]
        )
    return uploads


def _attack(base: str, api_key: str, until: float, outcomes, variants: list, offset: int) -> None:
    counts: Counter = Counter()
    sent = offset
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
            crafted = variants[sent % len(variants)]
            sent += 1
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


def decision_time(base: str, api_key: str, address: str = USER_ADDRESS) -> float | None:
    """Seconds from a user's document upload (from `address`) to its decision, or None if none came within 120 s."""
    return timed_decision(base, api_key, address)[0]


def timed_decision(base: str, api_key: str, address: str) -> tuple[float | None, float]:
    """(seconds from the upload to the decision or None after 120 s, seconds until the upload was answered)."""
    browser, step, session_id = document_step(base, api_key, address)
    files = [("document", ("passport.jpg", passport_page(), "image/jpeg"))] + step["frames"]
    started = time.monotonic()
    response = browser.post(f"{base}/flow/document", data=step["form"], files=files, timeout=120, allow_redirects=False)
    answered = time.monotonic() - started
    if response.status_code != 303:
        raise RuntimeError(f"the upload from {address} was answered {response.status_code}")
    while time.monotonic() - started < 120:
        status = requests.get(f"{base}/v1/sessions/{session_id}", headers={"X-API-Key": api_key}, timeout=30)
        if status.json()["session"]["status"] != "processing":
            return time.monotonic() - started, answered
        time.sleep(0.05)
    return None, answered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--attackers", type=int, default=2, help="attacker processes, all from one address")
    parser.add_argument(
        "--pictures", default="all", help="the crafted variants the attackers send in turn, by name (comma-separated)"
    )
    parser.add_argument("--port", type=int, default=16521)
    parser.add_argument(
        "--no-address-limit",
        action="store_true",
        help="lift the flow's per-address upload limit: the attacker's uploads all reach the upload checks",
    )
    args = parser.parse_args()
    from bench.decode_costs import crafted

    names = list(crafted()) if args.pictures == "all" else args.pictures.split(",")
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
        variants = crafted_uploads(names)  # built once, before the attackers fork
        context = multiprocessing.get_context("fork")
        outcomes = context.Queue()
        until = time.monotonic() + args.seconds
        attackers = [
            context.Process(
                target=_attack, args=(base, attacker_key, until, outcomes, variants, index * 3), daemon=True
            )
            for index in range(args.attackers)
        ]
        for process in attackers:
            process.start()
        time.sleep(2)  # the flood is under way
        probes = {"tenant_b": (victim_key, USER_ADDRESS), "tenant_a_other_user": (attacker_key, NEIGHBOUR_ADDRESS)}
        times: dict[str, list[float | None]] = {name: [] for name in probes}
        answered: dict[str, list[float]] = {name: [] for name in probes}
        while time.monotonic() < until:
            for name, (key, address) in probes.items():
                decided, upload = timed_decision(base, key, address)
                times[name].append(decided)
                answered[name].append(upload)
            time.sleep(1)
        uploads: Counter = Counter()
        for _ in attackers:
            uploads.update(outcomes.get(timeout=150))
        report = {"attackers": args.attackers, "seconds": args.seconds, "pictures": names}
        for name, measured in times.items():
            decided = sorted(value for value in measured if value is not None)
            report[name] = {
                "decisions": len(measured),
                "undecided_after_120s": len(measured) - len(decided),
                "p50_s": round(statistics.median(decided), 2) if decided else None,
                "max_s": round(max(decided), 2) if decided else None,
                f"over_{TARGET_SECONDS}_s": sum(value > TARGET_SECONDS for value in decided),
                "upload_answered_max_s": round(max(answered[name]), 2),
            }
        report["attacker_uploads_by_status"] = dict(sorted(uploads.items()))
        print("flooded:", json.dumps(report), flush=True)
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
