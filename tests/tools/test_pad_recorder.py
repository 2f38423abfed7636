"""The PAD recording kit (tools/pad-recorder): what it serves, and the capture it writes, read back."""

from __future__ import annotations

import importlib.util
import json
import re
import threading
import urllib.error
import urllib.request
import uuid
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from assurance.pad_evaluation import capture_read
from tests.support.faces import challenge_frames
from tests.support.pad import page_times

TOOL = Path(__file__).resolve().parents[2] / "tools" / "pad-recorder" / "recorder.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("pad_recorder", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def recorder_url(tool, tmp_path):
    recorder = tool.Recorder(tmp_path / "set", kind="attack", attack="screen_replay", consent="C-TEST-1")
    recorder.out.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), tool.handler_for(recorder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", recorder.out
    server.shutdown()
    thread.join()


def _multipart(fields: list[tuple[str, str | bytes, str | None]]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = b""
    for name, value, filename in fields:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        content = value if isinstance(value, bytes) else value.encode()
        kind = "image/jpeg" if filename else "text/plain"
        body += f"--{boundary}\r\nContent-Disposition: {disposition}\r\nContent-Type: {kind}\r\n\r\n".encode()
        body += content + b"\r\n"
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def test_the_page_runs_the_services_capture_script_on_an_issued_challenge(recorder_url):
    url, _ = recorder_url

    page = urllib.request.urlopen(url + "/").read().decode()
    script = urllib.request.urlopen(url + "/static/selfie.js").read()

    assert re.search(r'name="challenge" value="(left|right),[a-z,]+,center"', page)
    assert re.search(r"data-flash value=\"(red|green|blue)(,(red|green|blue)){11}\"", page)
    assert script == (TOOL.parents[2] / "static" / "flow" / "selfie.js").read_bytes()


def test_a_posted_attempt_is_written_in_the_capture_set_format(recorder_url):
    url, folder = recorder_url
    page = urllib.request.urlopen(url + "/").read().decode()
    challenge = re.search(r'name="challenge" value="([a-z,]+)"', page).group(1).split(",")
    durations = [int(ms) for ms in re.search(r'data-timing value="([0-9,]+)"', page).group(1).split(",")]
    flash = re.search(r'data-flash value="([a-z,]+)"', page).group(1).split(",")
    frames = challenge_frames(challenge)
    record = {"label": "Front Camera", "times": page_times(durations), "colors": flash}
    fields = [("challenge", ",".join(challenge), None), ("capture", json.dumps(record), None)]
    fields += [(f"frame_{i // 3}_{step}", data, f"{i}.jpg") for i, (step, data) in enumerate(frames)]
    body, content_type = _multipart(fields)

    request = urllib.request.Request(url + "/capture", body, {"Content-Type": content_type})
    assert urllib.request.urlopen(request).url.endswith("/?saved=1")

    (written,) = [path.parent for path in folder.glob("*/capture.json")]
    capture = capture_read(written)
    assert capture["type"] == "screen_replay" and capture["challenge"] == challenge
    assert capture["durations"] == durations and capture["flash"] == capture["shown"] == flash
    assert capture["camera"] == "Front Camera" and capture["times"] == record["times"]
    assert capture["frames"] == frames
    assert json.loads((written / "capture.json").read_text())["consent"] == "C-TEST-1"


def test_an_attempt_that_was_not_issued_is_refused(recorder_url):
    url, folder = recorder_url
    body, content_type = _multipart([("challenge", "left,right,left,center", None)])

    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(url + "/capture", body, {"Content-Type": content_type}))

    assert refused.value.code == 409
    assert not list(folder.glob("*/capture.json"))
