"""Webhook test helpers: a session finalized with a notification URL, and its delivery as the worker records it."""

from sessions_api.state_machine import session_cancel
from tests.support.waiting import wait_until
from webhooks.models import WebhookDelivery


def finalize_with_webhook(api, url: str, **fields) -> dict:
    """Create a session through the API with `notification_url=url`, then cancel it (a final transition)."""
    session = api.create_session(notification_url=url, **fields)
    session_cancel(session_id=session["sessionId"])
    return session


def delivery_of(session: dict) -> WebhookDelivery:
    return WebhookDelivery.objects.get(subject_ref=session["sessionId"])


def wait_for_status(session: dict, status: str, timeout: float = 10.0) -> WebhookDelivery:
    """The session's delivery once it reaches `status` (the worker records it just after the receiver answers)."""
    query = WebhookDelivery.objects.filter(subject_ref=session["sessionId"], status=status)
    return wait_until(query.first, timeout=timeout)
