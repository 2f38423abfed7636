"""What each team role may do in the dashboard, checked on the server for every page and action.

Reading is open to every member: sessions, deliveries, the audit log, key prefixes, the team. Seeing a
secret is never a read: a webhook signing secret is shown only by an action (reveal, rotate) and an API
key only when it is generated, and those actions need INTEGRATION, which a viewer does not have.
"""

from django.template.response import TemplateResponse

from tenants.models import Role

from .tenancy import tenancy_for

INTEGRATION = "integration"  # API keys, SDK keys, webhooks: signing secrets, addresses, events, tests, re-sends
ACCOUNT = "account"  # branding, the age-pass policy and session redaction
MEMBERS = "members"  # invite, change roles, remove (owners excepted)
OWNERS = "owners"  # make, change and remove owners

CAPABILITIES = {
    Role.OWNER: {INTEGRATION, ACCOUNT, MEMBERS, OWNERS},
    Role.ADMIN: {INTEGRATION, ACCOUNT, MEMBERS},
    Role.DEVELOPER: {INTEGRATION},
    Role.VIEWER: set(),
}
NEEDED_FOR = {
    INTEGRATION: "manage API keys, SDK keys and webhooks or see their secrets",
    ACCOUNT: "change the branding or the age-pass policy, or redact sessions",
    MEMBERS: "manage the team",
    OWNERS: "manage owners",
}
WHO_MAY = {capability: [role.label for role in Role if capability in CAPABILITIES[role]] for capability in NEEDED_FOR}


def role_of(request) -> str | None:
    return tenancy_for(request).role


def may(request, capability: str) -> bool:
    return capability in CAPABILITIES.get(role_of(request), set())


def abilities(request) -> dict[str, bool]:
    """For templates: which buttons to show (the server checks again when they are pressed)."""
    return {capability: may(request, capability) for capability in NEEDED_FOR}


def assignable_roles(request) -> list[tuple[str, str]]:
    """The roles this member may give: an admin any but owner; an owner any."""
    if not may(request, MEMBERS):
        return []
    return [(role.value, role.label) for role in Role if role != Role.OWNER or may(request, OWNERS)]


def may_manage_member(request, member_role: str) -> bool:
    return may(request, OWNERS) if member_role == Role.OWNER else may(request, MEMBERS)


def refused(request, site, capability: str):
    """The 403 page: what the member's role is, and who may do it instead. Nothing was changed."""
    role = Role(role_of(request)).label if role_of(request) else "none"
    context = site.page_context(
        request,
        title="Not allowed for your role",
        role_label=role,
        needed=NEEDED_FOR[capability],
        who_may=", ".join(WHO_MAY[capability]),
    )
    return TemplateResponse(request, "dashboard/forbidden.html", context, status=403)
