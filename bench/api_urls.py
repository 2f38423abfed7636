"""URL map used only by bench/api.py: the product's URL map plus /v1/bench/baseline, the yardstick.

The product's routes are its own list, not included under a prefix: an include would add a resolver
level (and its cost) that production does not have, and charge it to the endpoints being measured.
"""

import hashlib

from django.db import connection
from django.http import JsonResponse
from django.urls import path

from ageverify.urls import urlpatterns as product_urlpatterns


def baseline(request):
    """The least an API request can cost here: hash the key, one PostgreSQL round trip, a small JSON body.

    It runs behind the same middleware stack as the real endpoints, so the ratio measures only what
    the API adds on top (authentication, rate limit, validation, the ORM, serialization).
    """
    digest = hashlib.sha256(request.META.get("HTTP_X_API_KEY", "").encode()).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM tenants_apikey WHERE key_hash = %s", [digest])
        row = cursor.fetchone()
    return JsonResponse({"found": row is not None, "keyHash": digest[:12]})


urlpatterns = [
    path("v1/bench/baseline", baseline),
    *product_urlpatterns,
]
