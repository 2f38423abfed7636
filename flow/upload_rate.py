"""Rate limits on the flow's upload POSTs: per session and per client address, in Redis, failing open.

Checked before the body is read, so a refused request costs a Redis round trip and nothing else.
A real user uploads a handful of times per session; these limits only stop loops.
"""

from django.conf import settings

from core.client_address import client_address
from core.rate_limit import bucket_take

from .cookie import flow_cookie_session_id


def upload_wait(request) -> int | None:
    """Seconds to wait when this upload is over a limit; None when it may go on (or Redis is away)."""
    buckets = [
        (
            f"flow-upload:address:{client_address(request) or 'unknown'}",
            settings.FLOW_UPLOAD_RATE_PER_ADDRESS,
            settings.FLOW_UPLOAD_BURST_PER_ADDRESS,
        )
    ]
    session_id = flow_cookie_session_id(request)
    if session_id:
        buckets.append(
            (
                f"flow-upload:session:{session_id}",
                settings.FLOW_UPLOAD_RATE_PER_SESSION,
                settings.FLOW_UPLOAD_BURST_PER_SESSION,
            )
        )
    for key, rate, burst in buckets:
        state = bucket_take(key, rate=rate, burst=burst)
        if state is not None and not state.allowed:
            return state.retry_after
    return None
