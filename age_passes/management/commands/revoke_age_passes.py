"""Withdraw every age pass proved by one method (a method found wanting): `manage.py revoke_age_passes document`."""

from django.core.management.base import BaseCommand

from age_passes.models import Method
from age_passes.services import age_passes_revoke


class Command(BaseCommand):
    help = "Revoke every age pass proved by METHOD (face, digital_id or document); prints how many."

    def add_arguments(self, parser):
        parser.add_argument("method", choices=Method.values)

    def handle(self, *args, method, **options):
        revoked = age_passes_revoke(method=method)
        self.stdout.write(f"revoked {revoked} age passes proved by {method}")
