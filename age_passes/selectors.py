"""Reads of age passes for other apps: a tenant's policy."""

from tenants.models import Tenant

from .models import AgePassPolicy


def age_pass_policy_of(*, tenant: Tenant) -> AgePassPolicy:
    """The tenant's policy; an unsaved one that neither offers nor accepts passes when it has none."""
    return AgePassPolicy.objects.filter(tenant=tenant).first() or AgePassPolicy(tenant=tenant)
