"""Flow: the hosted web pages an end user goes through to prove their age."""

from django.apps import AppConfig


class FlowConfig(AppConfig):
    name = "flow"
    default_auto_field = "django.db.models.BigAutoField"
