"""The dashboard's own actions: the sample events "Send test webhook" may send.

Every change the dashboard makes goes to the owning service (tenants, webhooks, age_passes, a session's
redaction in sessions_api.retention), which writes its own audit row.
"""

import json

from django.core.exceptions import ValidationError
from django.utils import timezone

from sessions_api.events import EVENT_COMPLETED, OPTIONAL_EVENTS, event_example
from sessions_api.timestamps import iso_ms
from tenants.audit import Actor
from tenants.models import Tenant
from webhooks.models import WebhookDelivery
from webhooks.services import TEST_EVENT, webhook_test_send

# What "Send test webhook" may send: webhook.test, or the documented example of any event the service sends.
TEST_EVENTS = (TEST_EVENT, EVENT_COMPLETED, *OPTIONAL_EVENTS)


def dashboard_webhook_test_send(
    *, tenant: Tenant, actor: Actor, mode: str, url: str, event: str = TEST_EVENT
) -> WebhookDelivery:
    """Send `webhook.test`, or the documented example of another event (TEST_EVENTS), now and for `mode`."""
    if event == TEST_EVENT:
        return webhook_test_send(tenant=tenant, mode=mode, url=url, actor=actor)
    if event not in TEST_EVENTS:
        raise ValidationError(f"{event!r} cannot be sent as a test event.")
    sample = event_example(event, mode=mode, timestamp=iso_ms(timezone.now()))
    payload = json.dumps(sample, separators=(",", ":"), ensure_ascii=False).encode()
    return webhook_test_send(tenant=tenant, mode=mode, url=url, actor=actor, event_type=event, payload=payload)
