"""Tenants: partner organisations, their API keys, their staff memberships and the audit log of changes to them."""

from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


def _key_or_tenant_changed(sender, **kwargs):
    from .services import api_keys_changed

    api_keys_changed()


class TenantsConfig(AppConfig):
    name = "tenants"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Any save of a key or a tenant (admin, dashboard, services) reaches the API key caches; the
        # few queryset updates that change what authentication reads call api_keys_changed themselves.
        from .models import ApiKey, Tenant

        for model in (ApiKey, Tenant):
            post_save.connect(_key_or_tenant_changed, sender=model, dispatch_uid=f"api-keys-changed-{model.__name__}")
            post_delete.connect(_key_or_tenant_changed, sender=model, dispatch_uid=f"api-keys-deleted-{model.__name__}")
