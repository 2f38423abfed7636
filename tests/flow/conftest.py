"""Helpers for the hosted flow tests: a browser-like client that opened a session's verification link."""
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from django.test import Client

from sessions_api.models import VerificationSession


def start_path(verification_url: str) -> str:
    """The verificationUrl without its origin (tests speak to the Django test server)."""
    parts = urlsplit(verification_url)
    return f"{parts.path}?{parts.query}"


@dataclass
class Visitor:
    """An end user's browser in the flow of one session."""

    client: Client
    session_id: str
    created: dict  # the session object POST /v1/sessions returned

    @property
    def session(self) -> VerificationSession:
        return VerificationSession.objects.select_related("tenant").get(pk=self.session_id)


def open_flow(api, client: Client | None = None, **fields) -> Visitor:
    created = api.create_session(**fields)
    client = client or Client()
    response = client.get(start_path(created["verificationUrl"]))
    assert response.status_code == 303, response.content
    return Visitor(client=client, session_id=created["sessionId"], created=created)


@pytest.fixture
def live_visitor(api):
    return open_flow(api, callback_url="https://shop.example.com/done", cancel_url="https://shop.example.com/cancel")


@pytest.fixture
def sandbox_visitor(sandbox_api):
    return open_flow(sandbox_api, callback_url="https://shop.example.com/done",
                     cancel_url="https://shop.example.com/cancel")


@pytest.fixture(autouse=True)
def _face_path_on(face_path_on):
    """The flow's selfie pages are what these tests exercise: the face path is on unless a test turns it off."""
