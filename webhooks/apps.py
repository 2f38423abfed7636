"""Webhooks: generic signed delivery of event payloads to a tenant's URL, with retries and an attempt log."""

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        # Registers the tasks with Celery in every process, so that webhooks.queueing can name them.
        from . import tasks  # noqa: F401
