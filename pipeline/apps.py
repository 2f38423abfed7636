"""Pipeline health for operators: worker heartbeats per queue and the backlog of deliveries and analyses."""

from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "pipeline"
    default_auto_field = "django.db.models.BigAutoField"
