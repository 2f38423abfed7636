"""Which tenant a dashboard request acts for: kept in the Django session, checked against memberships each time."""

from django.db.models import F
from django.http import HttpRequest

from tenants.models import Tenant

SESSION_KEY = "dashboard_tenant_id"
_CACHE_ATTR = "_dashboard_tenancy"


class Tenancy:
    """The user's tenants (their memberships) and the one the dashboard currently shows."""

    def __init__(self, tenants: list[Tenant], current: Tenant | None):
        self.tenants = tenants
        self.current = current
        self._roles = {tenant.id: getattr(tenant, "member_role", None) for tenant in tenants}

    @property
    def role(self) -> str | None:
        """The user's role in the current tenant (dashboard.roles says what it allows)."""
        return self._roles.get(self.current.id) if self.current is not None else None

    @property
    def has_several(self) -> bool:
        return len(self.tenants) > 1


def user_tenants(user) -> list[Tenant]:
    if not (user.is_authenticated and user.is_active):
        return []
    # The annotation follows the filter's join: each tenant carries this user's own membership role.
    tenants = Tenant.objects.filter(memberships__user=user).annotate(member_role=F("memberships__role"))
    return list(tenants.order_by("name", "id"))


def tenancy_for(request: HttpRequest) -> Tenancy:
    """Resolve once per request. A tenant id left in the session after its membership was removed is ignored."""
    cached = getattr(request, _CACHE_ATTR, None)
    if cached is not None:
        return cached
    tenants = user_tenants(request.user)
    chosen_id = request.session.get(SESSION_KEY) if hasattr(request, "session") else None
    current = next((tenant for tenant in tenants if tenant.id == chosen_id), tenants[0] if tenants else None)
    if current is not None and chosen_id != current.id:
        request.session[SESSION_KEY] = current.id
    tenancy = Tenancy(tenants, current)
    setattr(request, _CACHE_ATTR, tenancy)
    return tenancy


def current_tenant(request: HttpRequest) -> Tenant | None:
    return tenancy_for(request).current


def tenant_switch(request: HttpRequest, tenant_id: str) -> Tenant | None:
    """Make `tenant_id` the current tenant if the user is a member of it; None (and no change) otherwise."""
    tenancy = tenancy_for(request)
    tenant = next((tenant for tenant in tenancy.tenants if tenant.id == tenant_id), None)
    if tenant is not None:
        request.session[SESSION_KEY] = tenant.id
        tenancy.current = tenant
    return tenant
