"""A session whose analysis message was lost goes back to its step, with a message and no attempt used.

The analysis task travels through the broker and expires unconsumed after ANALYSIS_TASK_EXPIRES; a
broker restart can lose it outright. Nothing then ever decides the session, so a periodic watchdog
returns sessions stuck in `processing` past that lifetime (plus a margin) to the step the user was on.
An analysis whose soft time limit strikes outside its checks ends at once, not through the watchdog: as a
retake when it strikes while the session and what it keeps are read or while the decision is made, with its
decision written again when it strikes while that is written.
"""

import signal
from datetime import timedelta
from importlib import import_module

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection

from ageverify.celery import app
from sessions_api.analysis import ANALYSIS_TASK_EXPIRES, document_analyse, selfie_analyse
from sessions_api.models import VerificationSession
from sessions_api.state_machine import session_transition
from sessions_api.tasks import stuck_analyses_release
from sessions_api.watchdog import STUCK_ANALYSIS_MARGIN
from tests.factories import session_past_expiry, session_processing_for
from tests.support.flow import open_flow
from tests.support.uploads import jpeg, post_document, selfie_form

MESSAGE = "We could not check your pictures in time. This attempt does not count."
STUCK_FOR = timedelta(seconds=ANALYSIS_TASK_EXPIRES + STUCK_ANALYSIS_MARGIN + 1)


def lose_the_analysis(visitor, *, processing_for: timedelta = STUCK_FOR):
    """The broker forgets the queued task, and the session has been in processing for `processing_for`."""
    app.control.purge()
    session_processing_for(visitor.session_id, processing_for)


def submit_selfie(visitor):
    assert visitor.client.post("/flow/selfie", selfie_form(visitor))["Location"] == "/flow/progress"
    assert visitor.session.status == "processing"


def test_a_lost_selfie_analysis_sends_the_user_back_to_the_selfie_with_a_message(live_visitor, api):
    submit_selfie(live_visitor)
    lose_the_analysis(live_visitor)

    assert stuck_analyses_release() == 1

    # The progress page's poll leads back to the selfie page (not the consent page), which says why.
    assert live_visitor.client.get("/flow/status").json() == {"status": "initiated", "next": "/flow/selfie"}
    assert live_visitor.client.get("/flow/progress")["Location"] == "/flow/selfie"
    page = live_visitor.client.get("/flow/selfie").content.decode()
    assert MESSAGE in page and "Attempt 1 of 3" in page
    assert api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]["status"] == "initiated"
    assert live_visitor.session.selfie_attempts == 0


def test_a_lost_document_analysis_sends_the_user_back_to_the_document_step(live_visitor, api):
    for status in ("processing", "requires_doc"):
        session_transition(session_id=live_visitor.session_id, to=status, cause="test")
    assert post_document(live_visitor, jpeg(800, 600))["Location"] == "/flow/progress"
    lose_the_analysis(live_visitor)

    assert stuck_analyses_release() == 1

    assert live_visitor.client.get("/flow/progress")["Location"] == "/flow/document"
    page = live_visitor.client.get("/flow/document").content.decode()
    assert MESSAGE in page and "Attempt 1 of 3" in page
    assert api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]["status"] == "requires_doc"
    assert live_visitor.session.document_attempts == 0


def test_the_user_can_submit_again_after_a_lost_analysis(live_visitor):
    submit_selfie(live_visitor)
    lose_the_analysis(live_visitor)
    stuck_analyses_release()

    submit_selfie(live_visitor)

    assert live_visitor.client.get("/flow/progress").status_code == 200


def test_an_analysis_still_within_its_message_lifetime_is_left_alone(live_visitor):
    submit_selfie(live_visitor)
    lose_the_analysis(live_visitor, processing_for=timedelta(seconds=ANALYSIS_TASK_EXPIRES))

    assert stuck_analyses_release() == 0

    assert live_visitor.session.status == "processing"


def test_a_sandbox_session_parked_in_processing_is_left_alone(sandbox_api):
    # A partner tests its polling by leaving a sandbox session in processing: no analysis is coming.
    visitor = open_flow(sandbox_api)
    sandbox_api.post(f"/v1/test/sessions/{visitor.session_id}/advance", {"to": "processing"})
    lose_the_analysis(visitor)

    assert stuck_analyses_release() == 0

    assert visitor.session.status == "processing"


def test_a_stuck_session_past_its_expiry_is_left_to_expire_as_denied(live_visitor, api):
    submit_selfie(live_visitor)
    lose_the_analysis(live_visitor)
    session_past_expiry(live_visitor.session_id, ago=timedelta(0))

    assert stuck_analyses_release() == 0

    session = api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]
    assert (session["status"], session["reason"]) == ("denied", "expired")


def test_the_watchdog_runs_periodically_and_more_often_than_the_margin(db):
    entries = [
        entry
        for entry in settings.CELERY_BEAT_SCHEDULE.values()
        if entry["task"] == "sessions_api.tasks.stuck_analyses_release"
    ]

    assert len(entries) == 1
    assert entries[0]["task"] in app.tasks
    assert entries[0]["schedule"] <= timedelta(seconds=STUCK_ANALYSIS_MARGIN)


def _soft_time_limit(signum, frame):
    raise SoftTimeLimitExceeded()  # what billiard's handler of the soft limit's signal does


def time_limit_strikes_at(match: str):
    """A database hook that, at the first query containing `match`, keeps the worker waiting on the database and
    sends it the task's soft time limit meanwhile, as Celery does: the query is cut off, and the connection is
    left busy with it. Only in a transactional test: the connection cannot even roll back afterwards."""
    struck = []

    def strike(execute, sql, params, many, context):
        if not struck and match in sql:
            struck.append(sql)
            previous = signal.signal(signal.SIGALRM, _soft_time_limit)
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            try:
                execute("SELECT pg_sleep(2)", None, False, context)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
        return execute(sql, params, many, context)

    return connection.execute_wrapper(strike), struck


@pytest.mark.parametrize(
    "match, attempts",
    [
        ('FROM "sessions_api_verificationsession"', 0),  # before the checks: our failure costs the user nothing
        ("FOR UPDATE", 1),  # the checks' own verdict (no face in the picture), written again: it counts
    ],
)
def test_a_selfie_analysis_out_of_time_outside_its_checks_ends_as_a_retake(
    transactional_db, live_visitor, api, match, attempts
):
    """Reading the session (a slow database) or writing the decision: the session is never left processing."""
    submit_selfie(live_visitor)
    app.control.purge()  # the analysis is run here, in this process, where the hook sees its queries
    frames = [(step, jpeg()) for step in live_visitor.session.liveness_challenge]

    hook, struck = time_limit_strikes_at(match)
    with hook:
        selfie_analyse(session_id=live_visitor.session_id, frames=frames)

    assert struck
    assert api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]["status"] == "initiated"
    assert live_visitor.session.selfie_attempts == attempts
    assert f"Attempt {attempts + 1} of 3" in live_visitor.client.get("/flow/selfie").content.decode()


@pytest.mark.parametrize(
    "match, attempts",
    [
        ('FROM "sessions_api_verificationsession"', 0),
        ('"evidence_seal" AS "evidence_seal" FROM', 0),  # what earlier attempts kept
        ("FOR UPDATE", 1),  # the checks' verdict (an unreadable document) written again
    ],
)
def test_a_document_analysis_out_of_time_outside_its_checks_ends_as_a_retake(
    transactional_db, live_visitor, api, match, attempts
):
    for status in ("processing", "requires_doc"):
        session_transition(session_id=live_visitor.session_id, to=status, cause="test")
    assert post_document(live_visitor, jpeg(800, 600))["Location"] == "/flow/progress"
    app.control.purge()

    hook, struck = time_limit_strikes_at(match)
    with hook:
        document_analyse(session_id=live_visitor.session_id, image=jpeg(800, 600))

    assert struck
    assert api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]["status"] == "requires_doc"
    assert live_visitor.session.document_attempts == attempts


def strikes_once_in(function):
    """`function`, raising the task's soft time limit on its first call: as the signal does when it arrives
    while the worker decides (pure Python, between the reads and the write), where no database hook sees it."""
    struck = []

    def striking(*args, **kwargs):
        if not struck:
            struck.append(function.__name__)
            raise SoftTimeLimitExceeded()
        return function(*args, **kwargs)

    return striking, struck


def test_a_selfie_analysis_out_of_time_while_deciding_ends_as_a_retake(live_visitor, api, monkeypatch):
    from sessions_api import analysis

    submit_selfie(live_visitor)
    app.control.purge()
    frames = [(step, jpeg()) for step in live_visitor.session.liveness_challenge]
    striking, struck = strikes_once_in(analysis.decide_selfie)
    monkeypatch.setattr(analysis, "decide_selfie", striking)

    selfie_analyse(session_id=live_visitor.session_id, frames=frames)

    assert struck
    assert api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]["status"] == "initiated"
    assert live_visitor.session.selfie_attempts == 0  # the service failed, not the user's picture


def test_a_document_analysis_out_of_time_while_deciding_ends_as_a_retake(live_visitor, api, monkeypatch):
    from sessions_api import analysis

    for status in ("processing", "requires_doc"):
        session_transition(session_id=live_visitor.session_id, to=status, cause="test")
    assert post_document(live_visitor, jpeg(800, 600))["Location"] == "/flow/progress"
    app.control.purge()
    striking, struck = strikes_once_in(analysis.decide_document)
    monkeypatch.setattr(analysis, "decide_document", striking)

    document_analyse(session_id=live_visitor.session_id, image=jpeg(800, 600))

    assert struck
    assert api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]["status"] == "requires_doc"
    assert live_visitor.session.document_attempts == 0


@pytest.mark.parametrize("check", ["checks.liveness.check_liveness", "checks.age.read_capture"])
def test_an_error_in_the_checks_on_the_last_attempt_costs_no_attempt_and_asks_again(
    live_visitor, api, monkeypatch, check
):
    # Issue 45: a failure on the service's side (an error in the checks, the time limit) used up one of the
    # user's attempts, and on the last one ended the session.
    VerificationSession.objects.filter(pk=live_visitor.session_id).update(selfie_attempts=2)
    submit_selfie(live_visitor)
    app.control.purge()
    frames = [(step, jpeg()) for step in live_visitor.session.liveness_challenge]

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the checks")

    module, name = check.rsplit(".", 1)
    monkeypatch.setattr(import_module(module), name, broken)
    if name == "read_capture":  # reached only after a live capture: let liveness pass
        from checks.results import Liveness

        monkeypatch.setattr(
            "checks.liveness.check_liveness", lambda *a, **k: Liveness(is_live=True, liveness_score=0.99, signals=())
        )
        monkeypatch.setattr("checks.liveness.frontal_frames", lambda frames, challenge: [jpeg()])

    selfie_analyse(session_id=live_visitor.session_id, frames=frames)

    assert api.get(f"/v1/sessions/{live_visitor.session_id}").json()["session"]["status"] == "initiated"
    assert live_visitor.session.selfie_attempts == 2
    page = live_visitor.client.get("/flow/selfie").content.decode()
    assert "Something went wrong while checking your picture" in page and "Attempt 3 of 3" in page
