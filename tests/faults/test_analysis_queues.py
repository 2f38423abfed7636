"""The analysis queue is fair between tenants, and between the addresses of one tenant's users: a backlog waits
behind its own work only.

Issue 28: eight crafted uploads from one address held another tenant's document decision for 72 s, because
every analysis waited in one queue, first in first out. Issue 45: six held the same tenant's other user 70.8 s,
in that tenant's queue. A real `celery worker -Q analysis` runs here against a private redis-server, one
analysis at a time, as the smallest deployment does.
"""

import pytest
from django.test import Client

from sessions_api.state_machine import session_transition
from sessions_api.tasks import analysis_queue_of
from tenants.models import Tenant
from tenants.services import tenant_create
from tests.support.api_client import ApiClient
from tests.support.crafted_pictures import flat_png
from tests.support.flow import TEST_CLIENT_ADDRESS, open_flow, post_document, post_selfie
from tests.support.outages import broker_at
from tests.support.waiting import wait_until

from .test_workers import no_face

pytestmark = [pytest.mark.faults, pytest.mark.django_db(transaction=True)]


def other_tenant_api(onboarded) -> ApiClient:
    """A second tenant whose analyses go to another queue than `onboarded`'s (tenants share one of
    ANALYSIS_QUEUE_SHARDS queues by their id: two of them may share one, as two tenants may share a worker)."""
    while True:
        other = tenant_create(name="Other Games")
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


def _document_visitor(api) -> object:
    visitor = open_flow(api)
    for status in ("processing", "requires_doc"):
        session_transition(session_id=visitor.session_id, to=status, cause="test")
    return visitor


def test_one_address_runs_one_analysis_at_a_time_and_the_next_user_is_taken_at_once(
    onboarded, api, private_redis, start_worker, face_path_on
):
    # Issue 45: the queues are served in turn, but when the others are empty every worker process takes the
    # flooder's next analysis, and a user who arrives then waits for one of them to end (with the worst pictures,
    # seconds each: here flat 25-megapixel PNGs). With ANALYSIS_RUNNING_PER_ADDRESS the flooder
    # holds one of the two processes; the other takes the next user at once.
    Tenant.objects.filter(pk=onboarded.tenant.pk).update(document_presence_required=False)  # the picture alone
    flooder = [_document_visitor(api) for _ in range(4)]
    neighbour = open_flow(api, Client(REMOTE_ADDR=neighbour_address(onboarded)))
    with broker_at(private_redis.url):
        for visitor in flooder:
            assert post_document(visitor, flat_png()).status_code == 303

    worker = start_worker("analysis", private_redis.url, concurrency=2)  # ANALYSIS_RUNNING_PER_ADDRESS: 1
    # Both processes have taken one of the flooder's analyses (and, with the limit, put the second back).
    wait_until(lambda: worker.output().count("document_analyse[") >= 2, timeout=60, describe=worker.output)
    with broker_at(private_redis.url):
        post_selfie(neighbour, no_face)
    wait_until(lambda: neighbour.session.status != "processing", timeout=120, describe=worker.output)

    decided = [visitor for visitor in flooder if visitor.session.status != "processing"]
    assert not decided, f"{len(decided)} of the flooding address's analyses were decided before the other user's"
    # The flooder's analyses are all decided in the end, one after another.
    wait_until(lambda: all(visitor.session.status != "processing" for visitor in flooder), timeout=180)
