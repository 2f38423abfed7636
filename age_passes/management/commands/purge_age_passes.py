"""Delete expired age passes now (the hourly beat task does the same): `manage.py purge_age_passes`."""

from django.core.management.base import BaseCommand

from age_passes.services import age_passes_purge


class Command(BaseCommand):
    help = "Delete every age pass past its expiry day, and spent challenges; prints how many passes."

    def handle(self, *args, **options):
        self.stdout.write(f"deleted {age_passes_purge()} expired age passes")
