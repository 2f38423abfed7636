"""`manage.py demo_seed`: a demo tenant with fresh keys, an operator and a staff login, for local trials only."""
import json

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from tenants.models import ApiKey, Tenant
from tenants.services import api_key_generate, api_key_revoke, membership_add, tenant_create

DEMO_TENANT = "Demo Shop"
DEMO_PASSWORD = "ageverify-demo"


class Command(BaseCommand):
    help = "Create (or refresh) the demo tenant and logins. Refuses to run with DEBUG off."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="Print one JSON object instead of a banner.")

    @transaction.atomic
    def handle(self, *args, json: bool = False, **options):
        if not settings.DEBUG:
            raise CommandError("demo_seed creates well-known passwords; it only runs with DEBUG=1.")
        tenant = Tenant.objects.filter(name=DEMO_TENANT).first()
        if tenant is None:
            onboarded = tenant_create(name=DEMO_TENANT, webhooks_enabled=True)
            tenant, live_key, test_key = onboarded.tenant, onboarded.live_key, onboarded.test_key
        else:
            # Keys are stored hashed, so a new run can only show new ones: rotate the demo pair.
            for api_key in tenant.api_keys.filter(label="default", revoked_at__isnull=True):
                api_key_revoke(api_key=api_key)
            live_key = api_key_generate(tenant=tenant, mode=ApiKey.Mode.LIVE, label="default").raw_key
            test_key = api_key_generate(tenant=tenant, mode=ApiKey.Mode.TEST, label="default").raw_key
        users = get_user_model()
        operator, _ = users.objects.get_or_create(username="admin", defaults={"email": "admin@localhost"})
        operator.is_staff = operator.is_superuser = True
        operator.set_password(DEMO_PASSWORD)
        operator.save()
        staff, _ = users.objects.get_or_create(username="demo", defaults={"email": "demo@localhost"})
        staff.set_password(DEMO_PASSWORD)
        staff.save()
        membership_add(tenant=tenant, user=staff)
        info = {
            "tenant_id": tenant.id,
            "api_key": live_key,
            "test_api_key": test_key,
            "webhook_secret": tenant.webhook_secret,
            "test_webhook_secret": tenant.test_webhook_secret,
            "dashboard": {"url": f"{settings.PUBLIC_BASE_URL}/dashboard/", "username": "demo", "password": DEMO_PASSWORD},
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
                    f"  Webhook secret   {tenant.webhook_secret}  (live events)",
                    f"  Webhook secret   {tenant.test_webhook_secret}  (test events)",
                    f"  Dashboard        {info['dashboard']['url']}  login demo / {DEMO_PASSWORD}",
                    f"  Operator admin   {info['admin']['url']}  login admin / {DEMO_PASSWORD}",
                    f"  API docs         {settings.PUBLIC_BASE_URL}/v1/docs",
                    "",
                    "  Try it:",
                    f"    curl -s -X POST {settings.PUBLIC_BASE_URL}/v1/sessions -H 'X-API-Key: {test_key}' \\",
                    "         -H 'Content-Type: application/json' -d '{\"subject\": \"user-1\", \"age_limit\": 18}'",
                    "",
                ]
            )
        )
