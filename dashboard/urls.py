"""Routes of the tenant dashboard under /dashboard/."""
from django.urls import path  # noqa: F401

urlpatterns: list = []
