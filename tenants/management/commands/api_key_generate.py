"""`manage.py api_key_generate TENANT_ID [--mode live|test] [--label LABEL]`: a new secret key, printed once as JSON."""

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from tenants.audit import Actor
from tenants.models import ApiKey, Tenant
from tenants.services import api_key_generate


class Command(BaseCommand):
    help = "Generate a secret API key for a tenant (recorded in its audit log); print it once as one JSON object."

    def add_arguments(self, parser):
        parser.add_argument("tenant_id")
        parser.add_argument("--mode", choices=ApiKey.Mode.values, default=ApiKey.Mode.LIVE)
        parser.add_argument("--label", default="", help="What the key is for, shown beside its prefix (100 chars).")

    def handle(self, *args, tenant_id, mode, label, **options):
        tenant = Tenant.objects.filter(pk=tenant_id).first()
        if tenant is None:
            raise CommandError(f"No tenant {tenant_id!r}.")
        if len(label) > 100:
            raise CommandError("--label must be at most 100 characters.")
        try:
            generated = api_key_generate(tenant=tenant, mode=mode, label=label, actor=Actor.command("api_key_generate"))
        except ValidationError as refused:
            raise CommandError(" ".join(refused.messages)) from None
        key = generated.api_key
        self.stdout.write(
            json.dumps(
                {"tenant_id": tenant.pk, "mode": mode, "api_key": generated.raw_key, "prefix": key.display_prefix}
            )
        )
