"""`manage.py create_tenant NAME [--email EMAIL] [--enable-webhooks]`: onboard a tenant, print its secrets as JSON."""

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from tenants.audit import Actor
from tenants.services import tenant_create


class Command(BaseCommand):
    help = "Create a tenant with one live key, one test key and a webhook secret; print them as one JSON object."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--email", default="")
        parser.add_argument("--enable-webhooks", action="store_true", help="Turn webhook sending on for the tenant.")

    def handle(self, *args, name, email, enable_webhooks, **options):
        name = name.strip()
        if not name or len(name) > 200:
            raise CommandError("NAME must be 1 to 200 characters.")
        if email:
            try:
                validate_email(email)
            except ValidationError:
                raise CommandError(f"{email!r} is not a valid email address.")
        onboarded = tenant_create(
            name=name, contact_email=email, webhooks_enabled=enable_webhooks, actor=Actor.command("create_tenant")
        )
        self.stdout.write(
            json.dumps(
                {
                    "tenant_id": onboarded.tenant.id,
                    "api_key": onboarded.live_key,
                    "test_api_key": onboarded.test_key,
                    "webhook_secret": onboarded.tenant.webhook_secret,
                    "test_webhook_secret": onboarded.tenant.test_webhook_secret,
                }
            )
        )
