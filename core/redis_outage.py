"""The host's memory of a Redis failure: for a few seconds after one, request-path callers skip Redis at once.

Every Redis call on the request path already gives up after REDIS_REQUEST_TIMEOUT; without this, a
frozen Redis would still cost every request that timeout once per call (rate limit, then webhook
publish). After a failure the rate limiter fails open and a webhook is left to the outbox sweep
without trying, until REDIS_OUTAGE_BACKOFF_SECONDS have passed and the next call tries Redis again.

The memory is shared by the processes of one host (every gunicorn worker, every worker thread): it is the
modification time of a small file in the temporary folder, one per Redis URL, set to the moment Redis may
be tried again. One process pays the timeout, the others read the file (a `stat`, about a microsecond)
and skip Redis too; with per-process memory each worker paid it once, which a quiet service spread over
many requests. A process also keeps what it last read, so a failure it met costs it no file access.
"""

import hashlib
import os
import tempfile
import time
from pathlib import Path

from django.conf import settings

_skip_until = 0.0


def _marker() -> Path:
    url = hashlib.sha256((settings.REDIS_URL or "").encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"ageverify-redis-outage-{url}"


def redis_recently_failed() -> bool:
    global _skip_until
    now = time.time()
    if now < _skip_until:
        return True
    try:
        until = os.stat(_marker()).st_mtime
    except OSError:  # never failed on this host (or the folder is not ours): try Redis
        return False
    if now < until:
        _skip_until = until
        return True
    return False


def redis_failure_note() -> None:
    global _skip_until
    _skip_until = time.time() + settings.REDIS_OUTAGE_BACKOFF_SECONDS
    marker = _marker()
    try:
        marker.touch()
        os.utime(marker, (_skip_until, _skip_until))
    except OSError:  # the back-off is then this process's only
        pass


def redis_outage_forget() -> None:
    """Try Redis at the next call, in every process of the host (tests start each with a working Redis)."""
    global _skip_until
    _skip_until = 0.0
    _marker().unlink(missing_ok=True)
