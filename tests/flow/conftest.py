"""Fixtures for the hosted flow tests: browser-like clients that opened a session's verification link."""

import pytest

from sessions_api.state_machine import session_transition
from tests.support.flow import open_flow


@pytest.fixture
def live_visitor(api):
    return open_flow(api, callback_url="https://shop.example.com/done", cancel_url="https://shop.example.com/cancel")


@pytest.fixture
def sandbox_visitor(sandbox_api):
    return open_flow(
        sandbox_api, callback_url="https://shop.example.com/done", cancel_url="https://shop.example.com/cancel"
    )


@pytest.fixture(autouse=True)
def _face_path_on(face_path_on):
    """The flow's selfie pages are what these tests exercise: the face path is on unless a test turns it off."""


@pytest.fixture
def document_visitor(live_visitor):
    """A visitor whose session was sent to the document step (selfie not conclusive)."""
    for status in ("processing", "requires_doc"):
        session_transition(session_id=live_visitor.session_id, to=status, cause="test")
    return live_visitor
