"""Sessions: the partner API, the session state machine and the stored check results."""
from django.apps import AppConfig


class SessionsApiConfig(AppConfig):
    name = "sessions_api"
    verbose_name = "Verification sessions"
    default_auto_field = "django.db.models.BigAutoField"
