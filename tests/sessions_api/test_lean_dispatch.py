"""Lean dispatch (sessions_api/api/lean.py) serves a view's methods only if it honours all of the view's classes.

It runs one authentication, one throttle, one parser and one renderer in place of DRF's, and the
permission classes that read only request.user: a view asking for anything else is refused when its
class is defined, not served without the check it asked for.
"""

import pytest
from django.core.exceptions import ImproperlyConfigured
from rest_framework.authentication import SessionAuthentication
from rest_framework.parsers import FormParser
from rest_framework.permissions import IsAdminUser, IsAuthenticated
from rest_framework.throttling import AnonRateThrottle

from sessions_api.api.views import ApiView, SessionCreateApi, SessionDetailApi


@pytest.mark.parametrize(
    "attribute, classes, message",
    [
        ("authentication_classes", [SessionAuthentication], "authentication_classes"),
        ("throttle_classes", [], "throttle_classes"),
        ("throttle_classes", [AnonRateThrottle], "throttle_classes"),
        ("parser_classes", [FormParser], "parser_classes"),
        ("permission_classes", [IsAdminUser], "permission classes"),
        ("permission_classes", [IsAuthenticated & IsAdminUser], "permission classes"),
    ],
)
def test_a_lean_view_with_classes_lean_dispatch_does_not_honour_is_refused_at_import(attribute, classes, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        type("Refused", (ApiView,), {"lean_methods": frozenset({"GET"}), attribute: classes})


def test_the_same_classes_on_a_view_served_by_drf_alone_are_fine():
    view = type("ByDrf", (ApiView,), {"throttle_classes": [], "permission_classes": [IsAdminUser]})
    assert not view.lean_methods


def test_the_apis_lean_views_use_only_what_lean_dispatch_honours():
    assert SessionCreateApi.lean_methods == {"POST"} and SessionDetailApi.lean_methods == {"GET"}
    assert SessionCreateApi.permission_classes == [IsAuthenticated]
