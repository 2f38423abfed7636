"""DRF authentication by the `X-API-Key` header (spec section 5)."""
import re
from dataclasses import dataclass

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication

from .models import ApiKey, Tenant
from .selectors import api_key_resolve
from .services import api_key_touch

_KEY_CHARACTERS = re.compile(r"[A-Za-z0-9_-]{1,200}")


@dataclass(frozen=True)
class ApiClient:
    """The authenticated caller of the API: one key of one tenant. Stands in for `request.user`."""

    api_key: ApiKey

    @property
    def tenant(self) -> Tenant:
        return self.api_key.tenant

    @property
    def is_authenticated(self) -> bool:
        return True


def _refuse_if_over_limit(request) -> None:
    """A caller without a valid key is limited per client address: 429 instead of 401 past its budget."""
    from sessions_api.rate_limit import unauthenticated_request_refused

    refused = unauthenticated_request_refused(request)
    if refused is not None:
        raise exceptions.Throttled(wait=refused.retry_after)


class ApiKeyAuthentication(BaseAuthentication):
    header = "HTTP_X_API_KEY"

    def authenticate(self, request):
        raw_key = request.META.get(self.header, "").strip()
        if not raw_key:
            _refuse_if_over_limit(request)
            raise exceptions.NotAuthenticated("Send your API key in the X-API-Key header.", code="missing_api_key")
        # Keys are url-safe ASCII; anything else (a NUL byte, which PostgreSQL refuses in a query) is
        # no key of ours and is answered without a lookup.
        api_key = api_key_resolve(raw_key) if _KEY_CHARACTERS.fullmatch(raw_key) else None
        if api_key is None:
            _refuse_if_over_limit(request)
            raise exceptions.AuthenticationFailed("The API key is unknown or has been revoked.", code="invalid_api_key")
        if not api_key.tenant.enabled:
            raise exceptions.PermissionDenied("This tenant has been disabled by the operator.", code="tenant_disabled")
        api_key_touch(api_key)
        return ApiClient(api_key=api_key), api_key

    def authenticate_header(self, request):
        # A value here keeps DRF answering 401 (not 403) to a missing or bad key.
        return 'ApiKey header="X-API-Key"'
