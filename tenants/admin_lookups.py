"""No admin list, on /admin/ or /dashboard/, filters on a column holding a secret or its hash.

Django's admin accepts a query-string filter on any field of the model (`?key_hash__startswith=ab`),
and the row count answers whether a guess was right: one character at a time, a hash or a secret
is read back. Filtering on these columns is refused with any lookup, through any relation.
"""

from django.contrib import admin

SECRET_COLUMNS = frozenset(
    {
        "key_hash",  # ApiKey
        "token_hash",
        "evidence_seal",  # VerificationSession
        "webhook_secret",
        "webhook_secret_previous",
        "test_webhook_secret",
        "test_webhook_secret_previous",  # Tenant
        "password",  # User
    }
)


def lookup_touches_a_secret(lookup: str) -> bool:
    return any(part in SECRET_COLUMNS for part in lookup.split("__"))


class SecretColumnsNotFilterable(admin.ModelAdmin):
    """Base of every ModelAdmin here: a filter on a secret column is a 400 (DisallowedModelAdminLookup)."""

    def lookup_allowed(self, lookup, value, request=None):
        if lookup_touches_a_secret(lookup):
            return False
        return super().lookup_allowed(lookup, value, request)
