"""The partner API's throttle: one token bucket per tenant and mode, decided with the cached key's confirmation."""

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from core.rate_limit import PendingTake
from tenants.api_keys import API_KEYS_GENERATION_KEY

from .authentication import api_key_confirm_current
from .idempotency import META_KEY as IDEMPOTENCY_META_KEY

# Requests without side effects: their rate-limit round trip overlaps the view's own database read.
READ_ONLY_METHODS = ("GET", "HEAD")


class ApiKeyRateThrottle(BaseThrottle):
    """DRF throttle keyed by the authenticated key's tenant and mode, with the tenant's override if set."""

    def allow_request(self, request, view):
        api_key = request.auth
        if api_key is None:
            return True
        tenant = api_key.tenant
        rate = tenant.rate_limit_per_second or settings.API_RATE_LIMIT_PER_SECOND
        burst = tenant.rate_limit_burst or max(settings.API_RATE_LIMIT_BURST, rate)
        pending = PendingTake(
            f"tenant:{tenant.pk}:{api_key.mode}", rate=rate, burst=burst, generation_key=API_KEYS_GENERATION_KEY
        )
        if request.method in READ_ONLY_METHODS or (
            getattr(view, "rate_limit_decided_before_writing", False) and IDEMPOTENCY_META_KEY not in request.META
        ):
            # Decided once the view has read (ApiView.finalize_response), or, for a view that writes, just
            # before its first write (ApiView.rate_limit_decide_now): the round trip overlaps the work before.
            request.rate_limit_pending = pending
            return True
        return self.decide(request, pending)

    @staticmethod
    def decide(request, pending: PendingTake) -> bool:
        """Read the take's answer: False to refuse (429); raises 401/403 for a key that is no longer valid."""
        state = pending.finish()
        request.rate_limit_state = state
        # A revoked key or a disabled tenant is refused before its token counts (401/403, never 429).
        api_key_confirm_current(request, state.generation if state else None)
        return state is None or state.allowed

    def wait(self):
        return None
