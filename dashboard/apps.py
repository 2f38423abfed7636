"""Dashboard: the tenant-scoped console for partner staff (a second Django AdminSite at /dashboard/)."""

from django.apps import AppConfig


class DashboardConfig(AppConfig):
    name = "dashboard"
    default_auto_field = "django.db.models.BigAutoField"
