"""Routes of the hosted verification flow under /flow/."""
from django.urls import path  # noqa: F401

app_name = "flow"
urlpatterns: list = []
