from django.apps import AppConfig


class AgePassesConfig(AppConfig):
    name = "age_passes"
    verbose_name = "Age passes"
    default_auto_field = "django.db.models.BigAutoField"
