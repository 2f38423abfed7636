"""`manage.py purge_sessions`: delete final sessions past their tenant's retention now (beat does it hourly)."""

from django.core.management.base import BaseCommand

from sessions_api.retention import final_sessions_purge


class Command(BaseCommand):
    help = "Delete final sessions older than their tenant's retention_days, keeping the usage chart's daily counts."

    def handle(self, *args, **options):
        purged = final_sessions_purge()
        self.stdout.write(f"purged {purged} final session(s)")
