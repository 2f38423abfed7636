"""The analysis queue is fair between tenants, and between the addresses of one tenant's users: a backlog waits
behind its own work only.

Issue 28: eight crafted uploads from one address held another tenant's document decision for 72 s, because
every analysis waited in one queue, first in first out. Issue 45: six held the same tenant's other user 70.8 s,
in that tenant's queue. A real `celery worker -Q analysis` runs here against a private redis-server, one
analysis at a time, as the smallest deployment does.
"""

import pytest
from django.test import Client

from sessions_api.tasks import analysis_queue_of
from tenants.services import tenant_create
from tests.factories import SETUP
from tests.support.api_client import ApiClient
from tests.support.flow import TEST_CLIENT_ADDRESS, open_flow, post_selfie
from tests.support.outages import broker_at
from tests.support.waiting import wait_until

from .test_workers import no_face

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def other_tenant_api(onboarded) -> ApiClient:
    """A second tenant whose analyses go to another queue than `onboarded`'s (tenants share one of
    ANALYSIS_QUEUE_SHARDS queues by their id: two of them may share one, as two tenants may share a worker)."""
    while True:
        other = tenant_create(name="Other Games", actor=SETUP)
        if analysis_queue_of(other.tenant.pk, TEST_CLIENT_ADDRESS) != analysis_queue_of(
            onboarded.tenant.pk, TEST_CLIENT_ADDRESS
        ):
            return ApiClient(other.live_key)


def neighbour_address(onboarded) -> str:
    """An address whose analyses for `onboarded` go to another queue than the test client's (addresses share one of
    ANALYSIS_QUEUE_SHARDS queues of a tenant, as tenants do)."""
    own = analysis_queue_of(onboarded.tenant.pk, TEST_CLIENT_ADDRESS)
    addresses = [f"198.51.100.{host}" for host in range(1, 255)]
    return next(
        (address for address in addresses if analysis_queue_of(onboarded.tenant.pk, address) != own), addresses[0]
    )


def test_one_tenants_backlog_of_analyses_does_not_hold_another_tenants_analysis(
    onboarded, api, private_redis, start_worker, face_path_on
):
    flooder = [open_flow(api) for _ in range(5)]
    other = open_flow(other_tenant_api(onboarded))
    with broker_at(private_redis.url):
        for visitor in flooder:
            post_selfie(visitor, no_face)
        post_selfie(other, no_face)  # queued last, behind the other tenant's five

    start_worker("analysis", private_redis.url)  # one analysis at a time
    wait_until(lambda: other.session.status != "processing", timeout=120)

    waiting = [visitor for visitor in flooder if visitor.session.status == "processing"]
    # First in, first out would decide it last; taken in turn with the flooder's queue, it is first or second.
    assert len(waiting) >= 3, f"only {len(waiting)} of the flooder's 5 analyses were still waiting"


def test_one_addresss_backlog_of_analyses_does_not_hold_another_user_of_the_same_tenant(
    onboarded, api, private_redis, start_worker, face_path_on
):
    flooder = [open_flow(api) for _ in range(5)]
    neighbour = open_flow(api, Client(REMOTE_ADDR=neighbour_address(onboarded)))
    with broker_at(private_redis.url):
        for visitor in flooder:
            post_selfie(visitor, no_face)
        post_selfie(neighbour, no_face)  # queued last, behind the five from the other address

    start_worker("analysis", private_redis.url)  # one analysis at a time
    wait_until(lambda: neighbour.session.status != "processing", timeout=120)

    waiting = [visitor for visitor in flooder if visitor.session.status == "processing"]
    # In the tenant's one queue it was decided last; in its address's own queue, first or second.
    assert len(waiting) >= 3, f"only {len(waiting)} of the flooding address's 5 analyses were still waiting"
