"""Per-tenant fairness inside a delivery worker: one tenant's slow receiver cannot hold every thread.

A delivery worker runs many attempts at once (a thread pool: delivery is waiting on the network).
Each tenant is sure of WEBHOOK_TENANT_MAX_IN_FLIGHT of them in one process (its share). Past its share
a tenant may borrow idle threads, but only while more than a share of the pool stays free for the
others: a single busy tenant gets most of an otherwise idle worker, a tenant whose receiver hangs
holds at most the pool less one share, and any other tenant always finds a share free. An attempt
that may not run now is not made but put back on the queue with a growing countdown, before anything
is claimed, so the delivery row is untouched and still due (the sweep catches it if the publish fails).
A tenant's drain (webhooks.drains), which sends one delivery after another, holds one slot while it runs.
"""

import threading
from collections import Counter
from contextlib import contextmanager

from django.conf import settings

DEFERRAL_MAX_SECONDS = 30


class TenantSlots:
    def __init__(self):
        self._lock = threading.Lock()
        self._in_flight: Counter[str] = Counter()
        self._total = 0
        self.pool_size = 0  # threads of this worker process (set when the worker starts); 0: no borrowing

    @contextmanager
    def hold(self, tenant_id: str):
        """Yields True with one of the tenant's slots held, or False when it may not start an attempt now."""
        share = settings.WEBHOOK_TENANT_MAX_IN_FLIGHT
        with self._lock:
            taken = self._in_flight[tenant_id] < share or self.pool_size - self._total > share
            if taken:
                self._in_flight[tenant_id] += 1
                self._total += 1
        try:
            yield taken
        finally:
            if taken:
                with self._lock:
                    self._in_flight[tenant_id] -= 1
                    self._total -= 1
                    if not self._in_flight[tenant_id]:
                        del self._in_flight[tenant_id]


tenant_slots = TenantSlots()


def deferral_countdown(deferrals: int) -> float:
    """1, 2, 4 ... 30 s: a tenant whose receiver hangs for long is asked about less and less often."""
    return float(min(DEFERRAL_MAX_SECONDS, 2**deferrals))
