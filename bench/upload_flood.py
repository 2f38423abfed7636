"""Upload flood: hostile selfie uploads in parallel while a partner reads its sessions, on real gunicorn.

Run by hand:  .venv/bin/python bench/upload_flood.py [--seconds 20] [--attackers 6] [--workers 3]

Starts `gunicorn ageverify.wsgi --workers 3` (the README's production command, with the 3 workers issue 11
measured it with) and, with --celery, one
Celery worker as the README runs it. Attacker threads open live sessions through the hosted flow and
post, again and again, the uploads issue 11 measured: 5000x5000 RGBA PNGs (110 KB each), tiny
JPEGs whose header claims 4999x5000, and batches of valid frames whose last frame is not a picture
(on the selfie page when the age policy lets a face decide, else one picture each on the document page)
(each attacker its own process). Meanwhile the partner reads GET /v1/sessions/{id} every 100 ms. Prints the partner's
p50 / p99 / max latency, how many reads failed or took over 1 s, and the uploads' status codes.
Uses DATABASE_URL / REDIS_URL when set, else the database av_upload_flood (created and migrated here)
and Redis db 5.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/av_upload_flood"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/5"


# --- the hostile uploads ---------------------------------------------------------------------------


@cache
def big_rgba_png() -> bytes:
    """5000x5000 RGBA, one colour: ~110 KB on the wire, 25 megapixels (100 MB) once decoded."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGBA", (5000, 5000), (200, 150, 120, 255)).save(buffer, "PNG", optimize=False, compress_level=9)
    return buffer.getvalue()


@cache
def lying_jpeg(width: int = 4999, height: int = 5000) -> bytes:
    """A tiny JPEG whose header claims width x height: the decoder works through megapixels of nothing."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), (120, 90, 60)).save(buffer, "JPEG", quality=50)
    data = bytearray(buffer.getvalue())
    sof = data.find(b"\xff\xc0")
    data[sof + 5 : sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(data)


@cache
def camera_frame() -> bytes:
    import numpy as np
    from PIL import Image

    pixels = np.random.default_rng(7).integers(0, 256, size=(480, 640, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "JPEG", quality=80)
    return buffer.getvalue()


def hostile_uploads(challenge: list[str]) -> dict[str, list[tuple[str, tuple]]]:
    """The three uploads, as multipart file lists for the selfie form of this challenge."""
    fields = [f"frame_{index}_{step}" for index, step in enumerate(challenge)]
    last_frame_invalid = [
        (name, (f"{name}-{n}.jpg", camera_frame(), "image/jpeg")) for name in fields for n in range(8)
    ]
    last_frame_invalid[-1] = (fields[-1], ("last.jpg", b"\xff\xd8\xff" + b"not a picture" * 40, "image/jpeg"))
    return {
        "big_png": [(name, (f"{name}.png", big_rgba_png(), "image/png")) for name in fields],
        "lying_jpeg": [(name, (f"{name}.jpg", lying_jpeg(), "image/jpeg")) for name in fields],
        "last_frame_invalid": last_frame_invalid,
    }


# --- driving the service ---------------------------------------------------------------------------


def create_session(base: str, api_key: str) -> dict:
    response = requests.post(
        f"{base}/v1/sessions", json={"subject": "flood", "age_limit": 18}, headers={"X-API-Key": api_key}, timeout=30
    )
    response.raise_for_status()
    return response.json()["session"]


class Browser(requests.Session):
    """Keeps cookies by hand: the flow's are Secure (DEBUG is off) and the bench speaks plain HTTP on
    loopback, as the TLS proxy would to gunicorn, where a cookie jar would not send them back."""

    def __init__(self, address: str | None = None):
        super().__init__()
        self.jar: dict[str, str] = {}
        # The user's address as a trusted proxy reports it (DASHBOARD_LOGIN_TRUSTED_PROXIES=1), when given.
        self.forwarded = {"X-Forwarded-For": address} if address else {}

    def request(self, method, url, **kwargs):
        follow = kwargs.pop("allow_redirects", True)
        for _ in range(5):  # redirects by hand: requests drops a hand-set Cookie header on them
            cookies = "; ".join(f"{k}={v}" for k, v in self.jar.items())
            headers = {**kwargs.pop("headers", {}), **self.forwarded, "Cookie": cookies}
            response = super().request(method, url, headers=headers, allow_redirects=False, **kwargs)
            self.jar.update(response.cookies.get_dict())
            self.cookies.clear()
            if not (follow and response.is_redirect):
                return response
            method, url = "GET", urljoin(url, response.headers["Location"])
            kwargs = {"timeout": kwargs.get("timeout")}
        return response


def _csrf(page: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)


def open_upload_step(base: str, api_key: str) -> tuple[Browser, str, dict[str, list]]:
    """A browser on a fresh live session's upload page: (browser, the page's path, the hostile uploads for it).

    The selfie page when the age policy lets a face decide at this age limit; otherwise the session
    goes to the document step first (as the consent page's button does), and the document page is attacked.
    """
    created = create_session(base, api_key)
    browser = Browser()
    parts = urlsplit(created["verificationUrl"])
    browser.get(f"{base}{parts.path}?{parts.query}", timeout=30, allow_redirects=False)
    selfie = browser.get(f"{base}/flow/selfie", timeout=60, allow_redirects=False)
    if selfie.status_code == 200:
        challenge = re.search(r'name="challenge" value="([^"]*)"', selfie.text).group(1).split(",")
        form = {"csrfmiddlewaretoken": _csrf(selfie.text), "challenge": ",".join(challenge)}
        return browser, "/flow/selfie", {kind: (form, files) for kind, files in hostile_uploads(challenge).items()}
    consent = browser.get(f"{base}/flow/consent", timeout=60).text
    browser.post(f"{base}/flow/no-camera", data={"csrfmiddlewaretoken": _csrf(consent)}, timeout=60)
    page = browser.get(f"{base}/flow/document", timeout=60, allow_redirects=False)
    form = {"csrfmiddlewaretoken": _csrf(page.text)}
    not_a_picture = b"\xff\xd8\xff" + b"not a picture" * 40
    return (
        browser,
        "/flow/document",
        {
            "big_png": (form, [("document", ("id.png", big_rgba_png(), "image/png"))]),
            "lying_jpeg": (form, [("document", ("id.jpg", lying_jpeg(), "image/jpeg"))]),
            "last_frame_invalid": (form, [("document", ("id.jpg", not_a_picture, "image/jpeg"))]),
        },
    )


@dataclass
class FloodResult:
    partner_latencies: list[float] = field(default_factory=list)
    partner_errors: int = 0
    uploads: Counter = field(default_factory=Counter)

    def summary(self) -> dict:
        lat = sorted(self.partner_latencies) or [0.0]
        return {
            "partner_reads": len(self.partner_latencies),
            "partner_p50_s": round(statistics.median(lat), 3),
            "partner_p99_s": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))], 3),
            "partner_max_s": round(max(lat), 3),
            "partner_over_1s": sum(1 for value in lat if value > 1.0),
            "partner_errors": self.partner_errors,
            "uploads": dict(sorted(self.uploads.items())),
        }


def _attack(base: str, api_key: str, number: int, until: float, outcomes) -> None:
    """One attacker, in its own process (so the partner's timing is not skewed by the attackers' GIL)."""
    counts: Counter = Counter()
    kinds = ["big_png", "lying_jpeg", "last_frame_invalid"]
    sent = 0
    while time.monotonic() < until:
        try:
            browser, path, uploads = open_upload_step(base, api_key)
        except Exception:
            counts["session_open_failed"] += 1
            time.sleep(0.5)
            continue
        for _ in range(12):  # the same session until the service ends it or takes the upload
            if time.monotonic() >= until:
                break
            kind = kinds[(number + sent) % len(kinds)]
            sent += 1
            try:
                form, files = uploads[kind]
                response = browser.post(f"{base}{path}", data=form, files=files, timeout=120, allow_redirects=False)
                counts[f"{path} {kind} {response.status_code}"] += 1
                if response.status_code in (303, 409, 403):
                    break  # accepted for analysis, or the session is over: take a new one
            except requests.RequestException:
                counts[f"{kind} error"] += 1
    outcomes.put(dict(counts))


def flood(base: str, api_key: str, *, seconds: float, attackers: int) -> FloodResult:
    import multiprocessing

    result = FloodResult()
    watched = create_session(base, api_key)["sessionId"]
    for kind in ("big_png", "lying_jpeg", "last_frame_invalid"):  # build the payloads before the clock runs
        hostile_uploads(["left", "right", "up", "center"])[kind]
    for _ in range(3):  # every web worker has its database connection, URL map and templates ready
        open_upload_step(base, api_key)
        for _ in range(3):
            requests.get(f"{base}/v1/sessions/{watched}", headers={"X-API-Key": api_key}, timeout=60)
    context = multiprocessing.get_context("fork")
    outcomes = context.Queue()
    until = time.monotonic() + seconds
    processes = [
        context.Process(target=_attack, args=(base, api_key, n, until, outcomes), daemon=True) for n in range(attackers)
    ]
    for process in processes:
        process.start()
    time.sleep(0.5)  # the attackers are under way before the partner starts counting
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            response = requests.get(f"{base}/v1/sessions/{watched}", headers={"X-API-Key": api_key}, timeout=120)
            if response.status_code != 200:
                result.partner_errors += 1
        except requests.RequestException:
            result.partner_errors += 1
        result.partner_latencies.append(time.monotonic() - started)
        time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))
    for _ in processes:
        try:
            result.uploads.update(outcomes.get(timeout=150))
        except Exception:
            result.uploads["attacker_lost"] += 1
    for process in processes:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
    return result


# --- running it by hand ----------------------------------------------------------------------------


def _prepare() -> dict:
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE_URL)
    os.environ.setdefault("REDIS_URL", DEFAULT_REDIS_URL)
    os.environ.setdefault("SECRET_KEY", "flood-only-secret-key-not-for-production-use")
    os.environ.setdefault("FLOW_SIGNING_KEY", "flood-only-flow-signing-key-not-for-production")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DEBUG"] = ""
    os.environ["ALLOWED_HOSTS"] = "127.0.0.1,localhost"
    # The partner's own rate limit must not be what slows it down in this measurement.
    os.environ["API_RATE_LIMIT_PER_SECOND"] = "100000"
    os.environ["API_RATE_LIMIT_BURST"] = "100000"
    from bench.api import ensure_database  # create the database if missing, then migrate

    ensure_database()
    return dict(os.environ)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--attackers", type=int, default=6)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--port", type=int, default=16520)
    parser.add_argument("--celery", action="store_true", help="also run one Celery worker (the analyses)")
    args = parser.parse_args()
    env = _prepare()
    base = f"http://127.0.0.1:{args.port}"
    env["PUBLIC_BASE_URL"] = base
    key = subprocess.run(
        [sys.executable, "manage.py", "create_tenant", "Flood bench"],
        cwd=REPO,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    import json

    api_key = json.loads(key)["api_key"]
    bin_dir = Path(sys.executable).parent
    processes = [
        subprocess.Popen(
            [
                str(bin_dir / "gunicorn"),
                "ageverify.wsgi",
                "--bind",
                f"127.0.0.1:{args.port}",
                "--workers",
                str(args.workers),
            ],
            cwd=REPO,
            env=env,
        )
    ]
    if args.celery:
        processes.append(
            subprocess.Popen(
                [str(bin_dir / "celery"), "-A", "ageverify", "worker", "--loglevel=WARNING"], cwd=REPO, env=env
            )
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                requests.get(f"{base}/healthz", timeout=1)
                break
            except requests.RequestException:
                time.sleep(0.2)
        quiet = FloodResult()
        for _ in range(20):
            started = time.monotonic()
            requests.get(
                f"{base}/v1/sessions/{create_session(base, api_key)['sessionId']}",
                headers={"X-API-Key": api_key},
                timeout=30,
            )
            quiet.partner_latencies.append(time.monotonic() - started)
        print("quiet:", json.dumps(quiet.summary()), flush=True)
        loud = flood(base, api_key, seconds=args.seconds, attackers=args.attackers)
        print(
            f"flooded ({args.attackers} attackers, {args.seconds:.0f} s, {args.workers} gunicorn workers):",
            json.dumps(loud.summary()),
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
    sys.path.insert(0, str(REPO))
    main()
