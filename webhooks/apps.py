"""Webhooks: generic signed delivery of event payloads to a tenant's URL, with retries and an attempt log."""

from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"
