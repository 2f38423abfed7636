"""Flower's settings, read by `celery -A ageverify flower` from the repository root: basic auth from Django settings.

Flower shows task arguments and can revoke tasks, so it never starts without credentials.
"""

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

if not settings.FLOWER_BASIC_AUTH:
    raise ImproperlyConfigured(
        "FLOWER_BASIC_AUTH is not set: give it as user:password (several pairs comma separated) before starting Flower."
    )
if any(":" not in pair or pair.startswith(":") or pair.endswith(":") for pair in settings.FLOWER_BASIC_AUTH):
    raise ImproperlyConfigured("FLOWER_BASIC_AUTH must hold user:password pairs, comma separated.")

basic_auth = settings.FLOWER_BASIC_AUTH
