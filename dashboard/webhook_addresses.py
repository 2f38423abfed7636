"""The Webhooks page's address settings: a default notification address per mode, and "Send test webhook".

A session created without `notification_url` sends its webhook to the default address of its mode.
The test event (`webhook.test`, or the documented example of any event the service sends) is signed with that mode's
secret and logged like any delivery.
"""

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.views.decorators.http import require_POST

from core.rate_limit import bucket_take
from sessions_api.events import OPTIONAL_EVENTS
from sessions_api.models import Mode
from webhooks.addresses import webhook_url_problem
from webhooks.services import TEST_EVENT, webhook_endpoint_set, webhook_events_set

from . import selectors, services
from .tenancy import current_tenant
from .views import SECRET_MODES, _refuse_stale_form, _secret_mode, _shown_for_another_tenant, _url, actor_from

# "Send test webhook" sends a signed POST to an address the user typed: a few at once, then one a minute,
# per tenant, so the button cannot be used to flood an address with signed requests.
TEST_WEBHOOK_BURST = 5
TEST_WEBHOOK_RATE_PER_SECOND = 1 / 60


def _back(mode: str) -> HttpResponseRedirect:
    return HttpResponseRedirect(f"{_url('webhooks')}#webhook-address-{mode}")


@require_POST
def webhook_address_save(request, site):
    if _shown_for_another_tenant(request):
        return _refuse_stale_form(request, "webhooks")
    mode, url = _secret_mode(request.POST), request.POST.get("url", "").strip()
    problem = webhook_url_problem(url) if url else None
    if problem is not None:
        messages.error(request, f"The address was not saved: it {problem[1]}.")
        return _back(mode)
    webhook_endpoint_set(tenant=current_tenant(request), actor=actor_from(request), mode=mode, url=url)
    which = SECRET_MODES[mode].lower()
    messages.success(request, f"Default address for {which}: {url}." if url else f"No default address for {which}.")
    return _back(mode)


@require_POST
def webhook_test_send(request, site):
    if _shown_for_another_tenant(request):
        return _refuse_stale_form(request, "webhooks")
    tenant, mode = current_tenant(request), _secret_mode(request.POST)
    event = request.POST.get("event") or TEST_EVENT
    url = selectors.webhook_address(tenant=tenant, mode=mode)
    if event not in services.TEST_EVENTS:
        messages.error(request, f"Choose a test event among: {', '.join(services.TEST_EVENTS)}.")
        return _back(mode)
    throttled = bucket_take(
        f"webhook-test:{tenant.pk}", rate=TEST_WEBHOOK_RATE_PER_SECOND, burst=TEST_WEBHOOK_BURST
    )  # None when Redis is unreachable: the button still works
    if throttled is not None and not throttled.allowed:
        messages.error(request, f"Too many test webhooks: try again in {throttled.retry_after} s.")
    elif not url:
        messages.error(request, "Set a default address first: the test webhook goes there.")
    elif not tenant.webhooks_enabled:
        messages.error(
            request,
            "Webhook sending is not enabled for your account, so no test webhook was sent. "
            "Ask AgeVerify support to switch it on.",
        )
    else:
        delivery = services.dashboard_webhook_test_send(
            tenant=tenant, actor=actor_from(request), mode=mode, url=url, event=event
        )
        mode_word = "test" if mode == Mode.TEST else "live"
        what = "Test webhook" if event == TEST_EVENT else f"Sample {event} (the documented example)"
        messages.success(
            request,
            f"{what} {delivery.pk} queued to {url}, signed with the {mode_word} secret. "
            "Its attempts appear under Recent deliveries.",
        )
    return _back(mode)


@require_POST
def webhook_events_save(request, site):
    if _shown_for_another_tenant(request):
        return _refuse_stale_form(request, "webhooks")
    mode = _secret_mode(request.POST)
    events = [event for event in request.POST.getlist("events") if event in OPTIONAL_EVENTS]
    webhook_events_set(tenant=current_tenant(request), actor=actor_from(request), mode=mode, events=events)
    chosen = ", ".join(["verification.completed", *sorted(set(events))])
    messages.success(request, f"Events sent for {mode} sessions: {chosen}.")
    return _back(mode)
