"""DRF authentication by the `X-API-Key` header (spec section 5)."""

import re
from dataclasses import dataclass

from django.conf import settings
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication

from core.client_address import client_address
from core.rate_limit import BucketState, bucket_take
from tenants.models import ApiKey, Tenant
from tenants.selectors import ResolvedKey, api_key_confirm, api_key_resolve, api_key_resolve_cached
from tenants.services import api_key_touch

_KEY_CHARACTERS = re.compile(r"[A-Za-z0-9_-]{1,200}")


@dataclass(frozen=True)
class ApiClient:
    """The authenticated caller of the API: one key of one tenant. Stands in for `request.user`."""

    api_key: ApiKey
    resolved: ResolvedKey | None = None  # set when the key may come from the cache and awaits confirmation

    @property
    def tenant(self) -> Tenant:
        return self.api_key.tenant

    @property
    def is_authenticated(self) -> bool:
        return True


def unauthenticated_request_refused(request) -> BucketState | None:
    """Take a token from the client address's bucket for a request without a valid key; its state if refused.

    Guessing keys or flooding 401s costs the caller, not the service."""
    address = client_address(request) or "unknown"
    state = bucket_take(
        f"nokey:{address}", rate=settings.API_UNAUTHENTICATED_RATE_PER_SECOND, burst=settings.API_UNAUTHENTICATED_BURST
    )
    return state if state is not None and not state.allowed else None


def _refuse_if_over_limit(request) -> None:
    """A caller without a valid key is limited per client address: 429 instead of 401 past its budget."""
    refused = unauthenticated_request_refused(request)
    if refused is not None:
        raise exceptions.Throttled(wait=refused.retry_after)


def _usable(api_key: ApiKey | None, request) -> ApiKey:
    if api_key is None:
        _refuse_if_over_limit(request)
        raise exceptions.AuthenticationFailed("The API key is unknown or has been revoked.", code="invalid_api_key")
    if not api_key.tenant.enabled:
        raise exceptions.PermissionDenied("This tenant has been disabled by the operator.", code="tenant_disabled")
    return api_key


class ApiKeyAuthentication(BaseAuthentication):
    """Every request reads its key from the database."""

    header = "HTTP_X_API_KEY"

    def authenticate(self, request):
        raw_key = self._raw_key(request)
        api_key = _usable(api_key_resolve(raw_key) if raw_key else None, request)
        api_key_touch(api_key)
        return ApiClient(api_key=api_key), api_key

    def _raw_key(self, request) -> str | None:
        raw_key = request.META.get(self.header, "").strip()
        if not raw_key:
            _refuse_if_over_limit(request)
            raise exceptions.NotAuthenticated("Send your API key in the X-API-Key header.", code="missing_api_key")
        # Keys are url-safe ASCII; anything else (a NUL byte, which PostgreSQL refuses in a query) is
        # no key of ours and is answered without a lookup.
        return raw_key if _KEY_CHARACTERS.fullmatch(raw_key) else None

    def authenticate_header(self, request):
        # A value here keeps DRF answering 401 (not 403) to a missing or bad key.
        return 'ApiKey header="X-API-Key"'


class CachedApiKeyAuthentication(ApiKeyAuthentication):
    """The key may come from the process's cache; `api_key_confirm_current` must confirm it in the same request.

    The per-key rate limiter (sessions_api) does that with the key generation its Redis round trip
    reads back, so the partner API authenticates without a database query on most requests.
    """

    def authenticate(self, request):
        raw_key = self._raw_key(request)
        resolved = api_key_resolve_cached(raw_key) if raw_key else None
        api_key = _usable(resolved.api_key if resolved else None, request)
        return ApiClient(api_key=api_key, resolved=resolved), api_key  # marked used once confirmed


def api_key_confirm_current(request, generation: str | None) -> None:
    """Refuse a cached key that a revocation or a disabled tenant has made stale (401 / 403 as at authentication)."""
    client = request.user
    resolved = getattr(client, "resolved", None)
    if resolved is None:
        return
    api_key = _usable(api_key_confirm(resolved, generation), request)
    if api_key is not resolved.api_key:
        request.user, request.auth = ApiClient(api_key=api_key), api_key
    api_key_touch(api_key)  # only now: a key revoked since it was cached is never marked used
