"""`manage.py api_key_revoke KEY`: revoke a secret API key, named by its prefix as the dashboard shows it."""

from django.core.management.base import BaseCommand, CommandError

from tenants.api_keys import API_KEY_PREFIX_LENGTH, api_key_parse
from tenants.audit import Actor
from tenants.models import ApiKey
from tenants.services import api_key_revoke


def _key_named(name: str) -> ApiKey | None:
    """The key `name` names: its display prefix (`av_live_AbC…`), the whole key, or the 12 characters alone."""
    name = name.strip().rstrip("…")
    parsed = api_key_parse(name)
    if parsed is not None:
        mode, prefix = parsed
        return ApiKey.objects.select_related("tenant").filter(mode=mode, prefix=prefix).first()
    if len(name) == API_KEY_PREFIX_LENGTH:
        return ApiKey.objects.select_related("tenant").filter(prefix=name).first()
    return None


class Command(BaseCommand):
    help = "Revoke a secret API key (it fails at once; recorded in its tenant's audit log)."

    def add_arguments(self, parser):
        parser.add_argument(
            "key", help="The key's prefix as the dashboard shows it (av_live_AbCdEfGhIjKl…), or the key."
        )

    def handle(self, *args, key, **options):
        api_key = _key_named(key)
        if api_key is None:
            raise CommandError(
                f"No API key {key!r}: give its prefix as the dashboard shows it, e.g. av_live_AbCdEfGhIjKl."
            )
        if not api_key.is_active:
            self.stdout.write(f"{api_key.display_prefix} of {api_key.tenant.name} was already revoked.")
            return
        api_key_revoke(api_key=api_key, actor=Actor.command("api_key_revoke"))
        self.stdout.write(
            f"{api_key.display_prefix} of {api_key.tenant.name} is revoked: requests with it now fail with 401."
        )
