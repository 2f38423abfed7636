"""Age assurance's offline toolkit: management commands only, no models, no URLs; the service never imports it."""

from django.apps import AppConfig


class AssuranceConfig(AppConfig):
    name = "assurance"
    verbose_name = "Age assurance (offline evaluation and calibration)"
