"""Routes of the tenant dashboard under /dashboard/: everything is served by its AdminSite."""

from django.urls import path

from .sites import dashboard_site

urlpatterns = [path("", dashboard_site.urls)]
