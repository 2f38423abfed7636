"""The PAD recording kit: records consented genuine and attack captures into the capture-set format of docs/pad.md.

Not part of the service (which keeps no image): a local tool for the people collecting a capture set.
It serves, on 127.0.0.1 only, a page running the service's own capture script (static/flow/selfie.js,
camera.js, texts.js) against a challenge, step timing and colour sequence issued exactly as the service
issues them (checks.liveness, checks.flash); what the page sends is written, unchanged, as one capture
directory (capture.json and its frames) under OUTDIR. Run from the repository root:

    .venv/bin/python tools/pad-recorder/recorder.py OUTDIR --consent C-2026-001 --kind genuine
    .venv/bin/python tools/pad-recorder/recorder.py OUTDIR --consent C-2026-002 --kind attack --attack screen_replay

then open http://127.0.0.1:8765/ in the browser of the device being recorded (its camera needs a secure
context: localhost, or a tunnel to it). Each Start records one attempt against a fresh challenge.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import threading
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[0] = str(ROOT)  # the repository's packages, not this folder

from checks.flash import FLASH_FRAMES_PER_STEP, flash_sequence_new  # noqa: E402
from checks.liveness import challenge_durations, challenge_new  # noqa: E402

ATTACKS = (
    "still_image",
    "print",
    "screen_replay",
    "looped_clip",
    "fixed_order_replay",
    "interactive_replay",
    "virtual_camera",
    "script_injection",
    "mask",
)
INSTRUCTIONS = {
    "left": "Turn your head to your left",
    "right": "Turn your head to your right",
    "center": "Look straight",
}
TEXTS = {
    "cameraStarting": "Starting the camera...",
    "selfieCameraOn": "Camera on. Press Start when ready.",
    "selfieStep": "Step %(step)s of %(total)s",
    "selfieThanks": "Done.",
    "selfieSending": "Saving...",
    "selfieCaptureFailed": "The capture failed; press Start again.",
    "selfieCameraFailed": "The camera could not start.",
}
SCRIPTS = ("texts.js", "camera.js", "selfie.js")
MAX_BODY = 40 * 1024 * 1024


class Recorder:
    """The issued challenge of the attempt in progress, and where attempts are written."""

    def __init__(self, out: Path, *, kind: str, attack: str | None, consent: str) -> None:
        self.out, self.kind, self.attack, self.consent = out, kind, attack, consent
        self.lock = threading.Lock()
        self.issued: dict | None = None

    def issue(self) -> dict:
        challenge = challenge_new()
        issued = {
            "challenge": challenge,
            "durations": challenge_durations(challenge),
            "flash": flash_sequence_new(FLASH_FRAMES_PER_STEP * len(challenge)),
        }
        with self.lock:
            self.issued = issued
        return issued

    def recorded(self) -> int:
        return sum(1 for _ in self.out.glob("*/capture.json"))

    def save(self, fields: dict[str, list[bytes]]) -> Path:
        with self.lock:
            issued, self.issued = self.issued, None
        if issued is None or fields.get("challenge", [b""])[0].decode() != ",".join(issued["challenge"]):
            raise ValueError("this attempt was not issued here (reload the page)")
        record = json.loads(fields.get("capture", [b"{}"])[0].decode() or "{}")
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        folder = self.out / f"{stamp}-{self.attack or self.kind}"
        folder.mkdir(parents=True)
        frames = []
        for index, step in enumerate(issued["challenge"]):
            for data in fields.get(f"frame_{index}_{step}", []):
                name = f"{len(frames):03d}-{step}.jpg"
                (folder / name).write_bytes(data)
                frames.append([step, name])
        capture = {
            "kind": self.kind,
            **({"attack": self.attack} if self.attack else {}),
            "challenge": issued["challenge"],
            "durations": issued["durations"],
            "flash": issued["flash"],
            "shown": [str(colour) for colour in record.get("colors", [])],
            "camera": str(record.get("label", "")),
            "times": [int(t) for t in record.get("times", [])],
            "frames": frames,
            "consent": self.consent,
            "recorded": stamp,
        }
        (folder / "capture.json").write_text(json.dumps(capture, indent=1))
        return folder


def page(recorder: Recorder, issued: dict, message: str = "") -> bytes:
    inputs = "".join(
        f'<input type="file" name="frame_{i}_{step}" data-step="{step}" data-instruction="{INSTRUCTIONS[step]}">'
        for i, step in enumerate(issued["challenge"])
    )
    what = recorder.attack or recorder.kind
    body = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>PAD recorder</title>
<link rel="stylesheet" href="/static/flow.css"></head><body><main class="page">
<h1>PAD recorder: {html.escape(what)}</h1>
<p>Consent {html.escape(recorder.consent)}; {recorder.recorded()} attempts recorded in this folder.
{html.escape(message)}</p>
<form method="post" action="/capture" enctype="multipart/form-data">
<div class="selfie" data-selfie>
<input type="hidden" name="challenge" value="{",".join(issued["challenge"])}">
<input type="hidden" data-timing value="{",".join(map(str, issued["durations"]))}">
<input type="hidden" data-flash value="{",".join(issued["flash"])}">
<section class="camera" data-camera hidden>
<div class="viewfinder"><video data-video playsinline muted autoplay></video>
<p class="instruction" data-instruction role="status"></p></div>
<p class="camera-status" data-camera-status role="status"></p>
<div class="actions"><button type="button" data-camera-on>Turn on the camera</button>
<button type="button" data-capture hidden>Start</button></div></section>
<details data-fallback><summary>No camera</summary>{inputs}</details>
</div></form>
<script type="application/json" id="flow-texts">{json.dumps(TEXTS)}</script>
{"".join(f'<script src="/static/{name}"></script>' for name in SCRIPTS)}
</main></body></html>"""
    return body.encode()


def handler_for(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    static = ROOT / "static" / "flow"

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: bytes, content_type: str = "text/html; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            match = re.fullmatch(r"/static/([a-z_]+\.(js|css))", self.path)
            if match and (static / match.group(1)).is_file():
                kind = "text/css" if match.group(2) == "css" else "text/javascript"
                self._send(200, (static / match.group(1)).read_bytes(), kind)
            elif self.path in ("/", "/?saved=1"):
                self._send(200, page(recorder, recorder.issue(), "Saved." if "saved" in self.path else ""))
            else:
                self._send(404, b"not found", "text/plain")

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if self.path != "/capture" or not 0 < length <= MAX_BODY:
                self._send(400, b"a capture is posted to /capture", "text/plain")
                return
            fields = parse_form(self.headers.get("Content-Type", ""), self.rfile.read(length))
            try:
                folder = recorder.save(fields)
            except ValueError as error:
                self._send(409, str(error).encode(), "text/plain")
                return
            print(f"saved {folder}", flush=True)
            self.send_response(303)
            self.send_header("Location", "/?saved=1")
            self.end_headers()

    return Handler


def parse_form(content_type: str, body: bytes) -> dict[str, list[bytes]]:
    """multipart/form-data fields by name (files and text alike), with the standard library's MIME parser."""
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    fields: dict[str, list[bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name:
            fields.setdefault(name, []).append(part.get_payload(decode=True) or b"")
    return fields


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the capture set's folder (created if missing)")
    parser.add_argument("--consent", required=True, help="the reference of the signed consent form(s)")
    parser.add_argument("--kind", choices=("genuine", "attack"), required=True)
    parser.add_argument("--attack", help=f"the attack type, e.g. {', '.join(ATTACKS)}")
    parser.add_argument("--port", type=int, default=8765)
    options = parser.parse_args()
    if (options.kind == "attack") != bool(options.attack):
        parser.error("--attack TYPE goes with --kind attack, and only with it")
    options.out.mkdir(parents=True, exist_ok=True)
    recorder = Recorder(options.out, kind=options.kind, attack=options.attack, consent=options.consent)
    server = ThreadingHTTPServer(("127.0.0.1", options.port), handler_for(recorder))
    print(f"recording into {options.out}: open http://127.0.0.1:{options.port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
