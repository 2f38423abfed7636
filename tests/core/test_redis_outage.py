"""The Redis outage back-off is the host's: a failure one process met spares the other processes the timeout."""

import os
import subprocess
import sys
from pathlib import Path

from core.redis_outage import redis_outage_forget, redis_recently_failed

REPO = Path(__file__).resolve().parents[2]


def test_a_redis_failure_met_by_one_process_makes_another_process_skip_redis(settings):
    # Issue 28: with Redis frozen and little traffic, each gunicorn worker paid the 0.5 s timeout on its own.
    note = "import django; django.setup(); from core.redis_outage import redis_failure_note; redis_failure_note()"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ageverify.settings",
        "REDIS_URL": settings.REDIS_URL,
        "REDIS_OUTAGE_BACKOFF_SECONDS": "30",  # the tests' own default is 0
    }
    subprocess.run([sys.executable, "-c", note], cwd=REPO, env=env, check=True, timeout=120)

    try:
        assert redis_recently_failed()
    finally:
        redis_outage_forget()
