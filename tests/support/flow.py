"""The hosted flow as an end user's browser goes through it: the session's link opened, its cookie kept."""
from dataclasses import dataclass
from urllib.parse import urlsplit

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
