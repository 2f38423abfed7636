"""`manage.py webhook_secret_rotate TENANT_ID [--mode live|test]`: a new signing secret, printed once as JSON."""

import json

from django.core.management.base import BaseCommand, CommandError

from tenants.audit import Actor
from tenants.models import ApiKey, Tenant, WebhookSecretFields
from tenants.services import tenant_webhook_secret_rotate


class Command(BaseCommand):
    help = (
        "Rotate a tenant's webhook signing secret for one mode (recorded in its audit log): the previous one "
        "keeps signing beside the new one for 24 hours. Prints the new secret as one JSON object."
    )

    def add_arguments(self, parser):
        parser.add_argument("tenant_id")
        parser.add_argument("--mode", choices=ApiKey.Mode.values, default=ApiKey.Mode.LIVE)

    def handle(self, *args, tenant_id, mode, **options):
        tenant = Tenant.objects.filter(pk=tenant_id).first()
        if tenant is None:
            raise CommandError(f"No tenant {tenant_id!r}.")
        tenant = tenant_webhook_secret_rotate(tenant=tenant, mode=mode, actor=Actor.command("webhook_secret_rotate"))
        fields = WebhookSecretFields.of(mode)
        expires = getattr(tenant, fields.previous_expires_at)
        self.stdout.write(
            json.dumps(
                {
                    "tenant_id": tenant.pk,
                    "mode": mode,
                    "webhook_secret": getattr(tenant, fields.current),
                    "previous_signs_until": expires.isoformat() if expires else None,
                }
            )
        )
