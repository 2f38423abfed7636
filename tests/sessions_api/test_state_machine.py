"""The session state machine (CONTRACT 3): allowed transitions only, one winner under concurrency, final is final."""

import threading

import pytest
from django.db import connection

from sessions_api.events import completed_event_payload
from sessions_api.models import SessionEvent, VerificationSession
from sessions_api.state_machine import TransitionNotAllowed, session_cancel, session_expire_if_due, session_transition
from tests.factories import TenantFactory, VerificationSessionFactory, session_past_expiry
from webhooks.models import WebhookDelivery

FINAL_MOVES = [
    {"to": "approved", "reason": "age_estimation"},
    {"to": "denied", "reason": "liveness_failed"},
    {"to": "denied", "reason": "expired"},
    {"to": "denied", "reason": "cancelled"},
    {"to": "processing"},
    {"to": "requires_doc"},
    {"to": "initiated"},
]


def _session(*, status="initiated", notification_url="https://shop.example.com/hooks"):
    tenant = TenantFactory(webhooks_enabled=True)
    return VerificationSessionFactory(tenant=tenant, status=status, notification_url=notification_url)


def _move(session_id, move):
    return session_transition(session_id=session_id, cause="test", **move)


@pytest.mark.parametrize(
    "start, move",
    [
        ("initiated", {"to": "processing"}),
        ("requires_doc", {"to": "processing"}),
        ("processing", {"to": "initiated"}),
        ("processing", {"to": "requires_doc"}),
        ("processing", {"to": "approved", "reason": "document"}),
        ("processing", {"to": "denied", "reason": "underage_document"}),
        ("initiated", {"to": "denied", "reason": "expired"}),
        ("requires_doc", {"to": "denied", "reason": "cancelled"}),
    ],
)
def test_allowed_transitions_happen_and_are_recorded(db, start, move):
    session = _session(status=start)

    moved = _move(session.id, move)

    assert moved.status == move["to"]
    assert moved.reason == move.get("reason", "")
    event = SessionEvent.objects.get(session=session)
    assert (event.from_status, event.to_status, event.cause) == (start, move["to"], "test")


@pytest.mark.parametrize(
    "start, move",
    [
        ("initiated", {"to": "approved", "reason": "age_estimation"}),
        ("initiated", {"to": "requires_doc"}),
        ("requires_doc", {"to": "approved", "reason": "document"}),
        ("processing", {"to": "processing"}),
        ("requires_doc", {"to": "requires_doc"}),
        # Outside `processing` only expiry and cancellation end a session: every other denial is a decision.
        ("initiated", {"to": "denied", "reason": "liveness_failed"}),
        ("requires_doc", {"to": "denied", "reason": "underage_document"}),
        ("initiated", {"to": "denied", "reason": "attempts_exceeded"}),
    ],
)
def test_transitions_outside_the_graph_are_refused(db, start, move):
    session = _session(status=start)

    with pytest.raises(TransitionNotAllowed):
        _move(session.id, move)

    assert VerificationSession.objects.get(pk=session.id).status == start
    assert not SessionEvent.objects.exists()


@pytest.mark.parametrize(
    "final", [{"to": "approved", "reason": "age_estimation"}, {"to": "denied", "reason": "liveness_failed"}]
)
def test_a_final_state_never_changes_again(db, final):
    session = _session(status="processing")
    _move(session.id, final)

    for move in FINAL_MOVES:
        with pytest.raises(TransitionNotAllowed):
            _move(session.id, move)
    with pytest.raises(TransitionNotAllowed):
        session_cancel(session_id=session.id)
    session_past_expiry(session.id, at=session.expires_at.replace(year=2000))
    session_expire_if_due(VerificationSession.objects.get(pk=session.id))

    stored = VerificationSession.objects.get(pk=session.id)
    assert (stored.status, stored.reason) == (final["to"], final["reason"])
    assert SessionEvent.objects.filter(session=session).count() == 1
    assert WebhookDelivery.objects.filter(subject_ref=session.id).count() == 1


@pytest.mark.parametrize(
    "move",
    [
        {"to": "approved", "reason": "expired"},
        {"to": "approved"},
        {"to": "denied"},
        {"to": "denied", "reason": "document"},
        {"to": "requires_doc", "reason": "expired"},
    ],
)
def test_a_reason_that_does_not_fit_the_status_is_a_programming_error(db, move):
    session = _session(status="processing")

    with pytest.raises(ValueError):
        _move(session.id, move)

    assert VerificationSession.objects.get(pk=session.id).status == "processing"


def test_a_final_transition_writes_the_webhook_outbox_row_with_the_spec_payload(db):
    session = _session(status="processing")

    approved = _move(session.id, {"to": "approved", "reason": "age_estimation"})

    delivery = WebhookDelivery.objects.get(subject_ref=session.id)
    assert delivery.url == "https://shop.example.com/hooks"
    assert delivery.event_type == "verification.completed"
    assert delivery.payload.encode() == completed_event_payload(approved)


def test_an_open_transition_writes_no_webhook(db):
    session = _session()

    _move(session.id, {"to": "processing"})

    assert not WebhookDelivery.objects.exists()


def test_no_webhook_without_a_notification_url_or_with_webhooks_disabled(db):
    without_url = _session(status="processing", notification_url="")
    disabled = VerificationSessionFactory(
        tenant=TenantFactory(webhooks_enabled=False),
        status="processing",
        notification_url="https://shop.example.com/hooks",
    )

    _move(without_url.id, {"to": "approved", "reason": "age_estimation"})
    _move(disabled.id, {"to": "denied", "reason": "liveness_failed"})

    assert not WebhookDelivery.objects.exists()


def _race(session_id: str, moves: list[dict]) -> list:
    """Run each move in its own thread (own database connection), released together by a barrier."""
    barrier = threading.Barrier(len(moves))
    outcomes: list = [None] * len(moves)

    def attempt(index, move):
        try:
            barrier.wait(5)
            outcomes[index] = _move(session_id, move)
        except Exception as error:  # the loser's TransitionNotAllowed is the expected outcome
            outcomes[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(i, move)) for i, move in enumerate(moves)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    return outcomes


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_final_transitions_have_exactly_one_winner():
    moves = [{"to": "approved", "reason": "age_estimation"}, {"to": "denied", "reason": "expired"}]
    for _ in range(5):
        session = _session(status="processing")

        outcomes = _race(session.id, moves)

        winners = [outcome for outcome in outcomes if isinstance(outcome, VerificationSession)]
        losers = [outcome for outcome in outcomes if not isinstance(outcome, VerificationSession)]
        assert len(winners) == 1, outcomes
        assert len(losers) == 1 and isinstance(losers[0], TransitionNotAllowed), outcomes
        stored = VerificationSession.objects.get(pk=session.id)
        assert stored.status == winners[0].status
        final_events = SessionEvent.objects.filter(session=session, to_status__in=["approved", "denied"])
        assert final_events.count() == 1
        assert WebhookDelivery.objects.filter(subject_ref=session.id).count() == 1
