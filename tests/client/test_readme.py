"""The README's Python client section runs as printed against the service (a sandbox key, a real webhook).

The snippet's free names are given what a partner's code would have there: its key and secret, the
webhook request its endpoint received; a user finishes the flow meanwhile (the sandbox plays them).
"""
import re
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from ageverify_client import AgeVerify

README = Path(__file__).resolve().parents[2] / "README.md"

pytestmark = pytest.mark.django_db(transaction=True)


def _python_blocks(section: str) -> list[str]:
    text = README.read_text().split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", text, re.S)


def _user_finishes_the_newest_session(client: AgeVerify, stop: threading.Event) -> None:
    while not stop.is_set():
        page = client.sessions.list(status="initiated", limit=1)
        if page.data:
            client.sandbox.advance(page.data[0].session_id, "approved")
            return
        time.sleep(0.1)


def test_the_python_client_section_runs_as_printed(service, tenant, sandbox, celery_worker, receiver):
    hooked = sandbox.sessions.create(subject="user-7", age_limit=18, notification_url=receiver.url())
    sandbox.sandbox.advance(hooked.session_id, "denied")
    [delivered] = receiver.wait_for(1, timeout=15)
    create_and_wait, confirm = _python_blocks("Python client")

    stop = threading.Event()
    user = threading.Thread(target=_user_finishes_the_newest_session, args=(sandbox, stop))
    user.start()
    try:
        names = {"API_KEY": tenant.test_key, "WEBHOOK_SECRET": tenant.tenant.test_webhook_secret,
                 "request": SimpleNamespace(body=delivered.body, headers=delivered.headers)}
        exec(create_and_wait.replace("http://localhost:8000", service), names)  # noqa: S102 (the README's code)
    finally:
        stop.set()
        user.join()

    assert names["result"].approved and names["result"].session_id == names["created"].session_id
    assert (names["event"].data.session_id, names["event"].data.status) == (hooked.session_id, "denied")

    names["session_id"] = names["created"].session_id
    exec(confirm, names)  # noqa: S102  (a sandbox session is not live: the block's except branch runs)
