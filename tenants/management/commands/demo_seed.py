"""`manage.py demo_seed`: a demo tenant with its keys, an operator and a staff login, for local trials only.

The demo's keys are stable across runs: the full keys are kept in the demo's local state
(`var/demo-keys.json`, readable by its owner only) and printed again on every run. New keys are
made only when that state is gone or its keys no longer work (a new database, a revoked key).
"""

import json
import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from tenants.audit import Actor
from tenants.models import ApiKey, Tenant
from tenants.selectors import api_key_resolve
from tenants.services import api_key_generate, api_key_revoke, membership_add, tenant_create

DEMO_TENANT = "Demo Shop"
DEMO_PASSWORD = "ageverify-demo"
STATE_FILE = "demo-keys.json"
KEY_FIELDS = {ApiKey.Mode.LIVE: "api_key", ApiKey.Mode.TEST: "test_api_key"}


def _state_path():
    return settings.VAR_DIR / STATE_FILE


def _kept_keys(tenant: Tenant) -> dict[str, str]:
    """The keys of the demo's local state that still work for this tenant, by mode."""
    try:
        state = json.loads(_state_path().read_text())
    except (OSError, ValueError):
        return {}
    kept = {}
    for mode, field in KEY_FIELDS.items():
        raw_key = state.get(field) if isinstance(state, dict) else None
        api_key = api_key_resolve(raw_key) if isinstance(raw_key, str) else None
        if api_key is not None and api_key.tenant_id == tenant.pk and api_key.mode == mode:
            kept[mode] = raw_key
    return kept


def _keep(tenant: Tenant, keys: dict[str, str]) -> None:
    path = _state_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as state:
        json.dump({"tenant_id": tenant.pk, **{KEY_FIELDS[mode]: key for mode, key in keys.items()}}, state)


class Command(BaseCommand):
    help = "Create (or refresh) the demo tenant and logins. Refuses to run with DEBUG off."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="Print one JSON object instead of a banner.")

    @transaction.atomic
    def handle(self, *args, json: bool = False, **options):
        if not settings.DEBUG:
            raise CommandError("demo_seed creates well-known passwords; it only runs with DEBUG=1.")
        actor = Actor.command("demo_seed")
        tenant = Tenant.objects.filter(name=DEMO_TENANT).first()
        if tenant is None:
            onboarded = tenant_create(name=DEMO_TENANT, webhooks_enabled=True, actor=actor)
            tenant = onboarded.tenant
            keys = {ApiKey.Mode.LIVE: onboarded.live_key, ApiKey.Mode.TEST: onboarded.test_key}
        else:
            keys = _kept_keys(tenant)
            for mode in KEY_FIELDS:
                if mode in keys:
                    continue
                # Keys are stored hashed: one that is not in the local state cannot be shown again, so
                # the demo's old key of that mode is replaced, and the run says so.
                for api_key in tenant.api_keys.filter(label="default", mode=mode, revoked_at__isnull=True):
                    api_key_revoke(api_key=api_key, actor=actor)
                keys[mode] = api_key_generate(tenant=tenant, mode=mode, label="default", actor=actor).raw_key
                self.stderr.write(f"New {mode} demo key: the previous one was not in {_state_path()}.")
        _keep(tenant, keys)
        live_key, test_key = keys[ApiKey.Mode.LIVE], keys[ApiKey.Mode.TEST]
        users = get_user_model()
        operator, _ = users.objects.get_or_create(username="admin", defaults={"email": "admin@localhost"})
        operator.is_staff = operator.is_superuser = True
        operator.set_password(DEMO_PASSWORD)
        operator.save()
        staff, _ = users.objects.get_or_create(username="demo", defaults={"email": "demo@localhost"})
        staff.set_password(DEMO_PASSWORD)
        staff.save()
        membership_add(tenant=tenant, user=staff, actor=actor)
        info = {
            "tenant_id": tenant.id,
            "api_key": live_key,
            "test_api_key": test_key,
            "webhook_secret": tenant.webhook_secret,
            "test_webhook_secret": tenant.test_webhook_secret,
            "dashboard": {
                "url": f"{settings.PUBLIC_BASE_URL}/dashboard/",
                "username": "demo",
                "password": DEMO_PASSWORD,
            },
            "admin": {"url": f"{settings.PUBLIC_BASE_URL}/admin/", "username": "admin", "password": DEMO_PASSWORD},
        }
        if json:
            import json as json_module

            self.stdout.write(json_module.dumps(info))
            return
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "AgeVerify demo is ready",
                    f"  Tenant ID        {info['tenant_id']}",
                    f"  API key (live)   {live_key}",
                    f"  API key (test)   {test_key}",
                    f"                   (the same on every run: kept in {_state_path()})",
                    f"  Webhook secret   {tenant.webhook_secret}  (live events)",
                    f"  Webhook secret   {tenant.test_webhook_secret}  (test events)",
                    f"  Dashboard        {info['dashboard']['url']}  login demo / {DEMO_PASSWORD}",
                    f"  Operator admin   {info['admin']['url']}  login admin / {DEMO_PASSWORD}",
                    f"  Documentation    {settings.PUBLIC_BASE_URL}/docs/",
                    f"  API docs         {settings.PUBLIC_BASE_URL}/v1/docs",
                    "",
                    "  Try it:",
                    f"    curl -s -X POST {settings.PUBLIC_BASE_URL}/v1/sessions -H 'X-API-Key: {test_key}' \\",
                    '         -H \'Content-Type: application/json\' -d \'{"subject": "user-1", "age_limit": 18}\'',
                    "",
                ]
            )
        )
