"""The decision rule (CONTRACT 3) at its edges: thresholds inclusive, attempts counted, never denied on a face."""

import dataclasses
import datetime

import pytest

from checks.results import AgeReading, DocumentData, HolderMatch, Liveness, Retake
from sessions_api.age_policy import FaceRule, LimitPolicy
from sessions_api.decision import Presence, decide_document, decide_selfie, document_accepted

LIVE = Liveness(is_live=True, liveness_score=0.93)
NOT_LIVE = Liveness(is_live=False, liveness_score=0.21)
TODAY = datetime.date(2026, 11, 22)
# ageConfidence at limit 18 reaches 0.5 at an estimate of 20 and 0.88 at 24 (slope 0.5 per year).
CALIBRATED_18 = LimitPolicy(age_limit=18, threshold=24.0, confidence_intercept=-10.0, confidence_slope=0.5)


def rule(threshold=24.0, min_confidence=0.5):
    return FaceRule(age_limit=18, threshold=threshold, min_confidence=min_confidence, calibrated=CALIBRATED_18)


def reading(estimated_age):
    return AgeReading(estimated_age=estimated_age, faces_used=1)


def selfie(liveness, age, attempts_so_far=0, **overrides):
    return decide_selfie(liveness, age, rule=rule(**overrides), attempts_so_far=attempts_so_far)


def passport(birthdate, *, expiry=datetime.date(2030, 1, 1), valid=True):
    return DocumentData(
        kind="mrz_td3",
        birthdate=birthdate,
        expiry_date=expiry,
        checks_valid=valid,
        problem=None if valid else "check digit mismatch",
    )


def document(data, attempts_so_far=0, age_limit=18):
    return decide_document(data, age_limit=age_limit, today=TODAY, attempts_so_far=attempts_so_far)


# --- selfie: age ---


def test_estimate_exactly_at_the_threshold_is_approved_with_the_calibrated_confidence():
    decision = selfie(LIVE, reading(24.0))

    assert (decision.to_status, decision.reason) == ("approved", "age_estimation")
    assert decision.results.age_estimation == {"estimated_age": 24.0, "age_confidence": pytest.approx(0.8808, abs=1e-4)}
    assert decision.results.liveness == {"is_live": True, "liveness_score": 0.93, "signals": []}
    assert not decision.is_retake


def test_estimate_just_below_the_threshold_asks_for_a_document_not_a_denial():
    decision = selfie(LIVE, reading(23.99))

    assert (decision.to_status, decision.reason) == ("requires_doc", "")
    assert decision.results.age_estimation["estimated_age"] == 23.99


def test_confidence_below_the_minimum_asks_for_a_document():
    assert selfie(LIVE, reading(40.0), min_confidence=0.99).to_status == "approved"
    assert selfie(LIVE, reading(24.5), min_confidence=0.99).to_status == "requires_doc"


def test_a_child_looking_face_still_gets_the_document_step_never_a_denial():
    decision = selfie(LIVE, reading(8.0), attempts_so_far=2)

    assert decision.to_status == "requires_doc"


def veto_rule(second_opinion_threshold=22.0):
    return FaceRule(
        age_limit=18,
        threshold=24.0,
        min_confidence=0.5,
        calibrated=CALIBRATED_18,
        second_opinion_threshold=second_opinion_threshold,
    )


def test_the_second_opinion_can_veto_an_approval_but_never_approve_on_its_own():
    clear = AgeReading(estimated_age=30.0, faces_used=3, lowest_estimate=29.0, second_opinion=22.0)
    vetoed = AgeReading(estimated_age=30.0, faces_used=3, lowest_estimate=29.0, second_opinion=21.9)
    only_the_opinion = AgeReading(estimated_age=23.0, faces_used=3, lowest_estimate=23.0, second_opinion=60.0)

    assert decide_selfie(LIVE, clear, rule=veto_rule(), attempts_so_far=0).to_status == "approved"
    assert decide_selfie(LIVE, vetoed, rule=veto_rule(), attempts_so_far=0).to_status == "requires_doc"
    assert decide_selfie(LIVE, only_the_opinion, rule=veto_rule(), attempts_so_far=0).to_status == "requires_doc"


def test_every_frame_must_clear_the_threshold_not_only_their_median():
    one_low_frame = AgeReading(estimated_age=30.0, faces_used=3, lowest_estimate=23.5, second_opinion=40.0)

    decision = decide_selfie(LIVE, one_low_frame, rule=veto_rule(), attempts_so_far=0)

    assert decision.to_status == "requires_doc"
    assert decision.results.age_estimation["estimated_age"] == 30.0  # the reported estimate is still the median


def test_with_the_face_path_off_even_an_old_face_goes_to_the_document_step():
    decision = selfie(LIVE, reading(70.0), threshold=None)

    assert (decision.to_status, decision.reason) == ("requires_doc", "")
    assert decision.results.age_estimation["estimated_age"] == 70.0


# --- selfie: liveness and attempts ---


@pytest.mark.parametrize("attempts_so_far", [0, 1])
def test_failed_liveness_before_the_third_attempt_asks_for_a_retake(attempts_so_far):
    decision = selfie(NOT_LIVE, None, attempts_so_far=attempts_so_far)

    assert (decision.to_status, decision.reason) == ("initiated", "")
    assert decision.is_retake and "live person" in decision.retake_message
    assert decision.results is None


def test_third_failed_liveness_attempt_leads_to_the_document_step_and_stores_the_score():
    decision = selfie(NOT_LIVE, None, attempts_so_far=2)

    assert (decision.to_status, decision.reason) == ("requires_doc", "")
    assert decision.results.liveness == {"is_live": False, "liveness_score": 0.21, "signals": []}
    assert decision.results.age_estimation is None
    assert not decision.is_retake


def test_failed_liveness_wins_over_an_adult_age_estimate():
    decision = selfie(NOT_LIVE, reading(50.0))

    assert decision.to_status == "initiated"


def test_an_unusable_selfie_is_a_retake_carrying_the_checks_message():
    decision = selfie(Retake("We could not find a face."), None, attempts_so_far=1)

    assert decision.to_status == "initiated"
    assert decision.retake_message == "We could not find a face."


def test_the_third_unusable_selfie_leads_to_the_document_step():
    decision = selfie(Retake("We could not find a face."), None, attempts_so_far=2)

    assert (decision.to_status, decision.reason, decision.results) == ("requires_doc", "", None)
    assert not decision.is_retake


def test_an_age_retake_after_passing_liveness_counts_as_an_attempt():
    assert selfie(LIVE, Retake("Two faces."), attempts_so_far=0).retake_message == "Two faces."
    assert selfie(LIVE, Retake("Two faces."), attempts_so_far=2).to_status == "requires_doc"


def test_a_passing_selfie_on_the_last_attempt_is_still_decided_on_its_merits():
    decision = selfie(LIVE, reading(30.0), attempts_so_far=2)

    assert decision.to_status == "approved"


# --- document ---


def test_document_holder_exactly_age_limit_today_is_approved_by_document():
    decision = document(passport(datetime.date(2008, 11, 22)))

    assert (decision.to_status, decision.reason) == ("approved", "document")
    assert decision.results.document == {
        "document_kind": "mrz_td3",
        "birthdate": datetime.date(2008, 11, 22),
        "true_age": 18,
        "expiry_date": datetime.date(2030, 1, 1),
        "liveness_checked": False,
        "holder_match_score": None,
        "holder_match_passed": None,
    }


def test_document_holder_one_day_short_of_age_limit_is_denied_underage():
    decision = document(passport(datetime.date(2008, 11, 23)))

    assert (decision.to_status, decision.reason) == ("denied", "underage_document")
    assert decision.results.document["true_age"] == 17


def test_document_expiring_today_is_still_valid_and_expired_yesterday_asks_for_another_then_denies():
    adult = datetime.date(1990, 5, 1)

    assert document(passport(adult, expiry=TODAY)).to_status == "approved"
    yesterday = passport(adult, expiry=TODAY - datetime.timedelta(days=1))
    first = document(yesterday)
    assert first.to_status == "requires_doc" and "expired" in first.retake_message and first.results is None
    last = document(yesterday, attempts_so_far=2)
    assert (last.to_status, last.reason) == ("denied", "document_expired")
    assert last.results.document["expiry_date"] == TODAY - datetime.timedelta(days=1)


def test_document_without_expiry_date_is_judged_on_age():
    assert document(passport(datetime.date(1990, 5, 1), expiry=None)).reason == "document"


def test_document_failing_its_check_digits_is_retaken_then_denied_invalid_storing_nothing_read_from_it():
    data = passport(datetime.date(1990, 5, 1), valid=False)

    first = document(data)
    assert first.to_status == "requires_doc" and "machine-readable lines" in first.retake_message
    last = document(data, attempts_so_far=2)
    assert (last.to_status, last.reason) == ("denied", "document_invalid")
    assert last.results is None


def test_invalid_document_is_denied_invalid_even_when_also_expired():
    data = passport(datetime.date(1990, 5, 1), expiry=datetime.date(2000, 1, 1), valid=False)

    assert document(data, attempts_so_far=2).reason == "document_invalid"


LIVE_CAPTURE = Liveness(is_live=True, liveness_score=0.8)


MATCHED_HOLDER = HolderMatch(score=0.7, matched=True)


def with_presence(data, liveness=LIVE_CAPTURE, holder=MATCHED_HOLDER, **options):
    return decide_document(
        data,
        age_limit=18,
        today=TODAY,
        attempts_so_far=options.pop("attempts_so_far", 0),
        presence=Presence(liveness=liveness, holder=holder),
        **options,
    )


def test_under_the_presence_policy_a_matching_live_face_approves_and_both_checks_are_stored():
    decision = with_presence(passport(datetime.date(1990, 5, 1)))

    assert (decision.to_status, decision.reason) == ("approved", "document")
    assert decision.results.liveness == {"is_live": True, "liveness_score": 0.8, "signals": []}
    assert decision.results.document["liveness_checked"] is True
    assert (decision.results.document["holder_match_score"], decision.results.document["holder_match_passed"]) == (
        0.7,
        True,
    )


def test_a_face_that_does_not_match_the_portrait_is_retaken_then_denied_as_document_mismatch():
    adult, other = passport(datetime.date(1990, 5, 1)), HolderMatch(score=0.3, matched=False)

    first = with_presence(adult, holder=other)
    assert first.to_status == "requires_doc" and "does not look like the photo" in first.retake_message
    last = with_presence(adult, holder=other, attempts_so_far=2)
    assert (last.to_status, last.reason) == ("denied", "document_mismatch")
    assert (last.results.document["holder_match_score"], last.results.document["holder_match_passed"]) == (0.3, False)


def test_a_portrait_sent_back_before_any_match_is_asked_again_without_spending_an_attempt():
    # checks.face_match sends back a portrait too blurred to match (Retake that spends no attempt): even on the
    # last attempt the user is asked for a better photo, and the attempt is not counted.
    blurred = Retake("The photo of your face on the document is too blurred", spends_attempt=False)

    last = with_presence(passport(datetime.date(1990, 5, 1)), holder=blurred, attempts_so_far=2)
    assert (last.to_status, last.retake_message, last.counts_attempt) == ("requires_doc", blurred.message, False)
    spent = with_presence(passport(datetime.date(1990, 5, 1)), holder=Retake("no portrait"), attempts_so_far=2)
    assert (spent.to_status, spent.reason) == ("denied", "attempts_exceeded")


def test_a_capture_that_is_not_live_is_retaken_then_denied_as_liveness_failed():
    not_live = Liveness(is_live=False, liveness_score=0.2)

    assert with_presence(passport(datetime.date(1990, 5, 1)), liveness=not_live).to_status == "requires_doc"
    last = with_presence(passport(datetime.date(1990, 5, 1)), liveness=not_live, attempts_so_far=2)
    assert (last.to_status, last.reason) == ("denied", "liveness_failed")
    assert last.results.document is None  # the document is not accepted without its holder


def test_a_document_without_a_findable_portrait_is_a_retake_not_a_mismatch():
    decision = with_presence(passport(datetime.date(1990, 5, 1)), holder=Retake("No photo on it."))

    assert (decision.to_status, decision.retake_message) == ("requires_doc", "No photo on it.")
    assert with_presence(passport(datetime.date(1990, 5, 1)), holder=Retake("x"), attempts_so_far=2).reason == (
        "attempts_exceeded"
    )


@pytest.mark.parametrize("attempts_so_far", [0, 1])
def test_unreadable_document_before_the_third_attempt_stays_on_the_document_step(attempts_so_far):
    decision = document(Retake("Hold the photo page flat."), attempts_so_far=attempts_so_far)

    assert (decision.to_status, decision.retake_message) == ("requires_doc", "Hold the photo page flat.")


def test_third_unreadable_document_denies_as_attempts_exceeded():
    decision = document(Retake("Hold the photo page flat."), attempts_so_far=2)

    assert (decision.to_status, decision.reason) == ("denied", "attempts_exceeded")


def test_printed_dates_that_disagree_with_the_machine_readable_ones_are_retaken_then_denied_invalid():
    disagreeing = DocumentData(
        kind="mrz_td3",
        birthdate=datetime.date(1990, 5, 1),
        expiry_date=datetime.date(2030, 1, 1),
        checks_valid=True,
        problem=None,
        zones_agree=False,
    )

    first = document(disagreeing)
    assert first.to_status == "requires_doc" and "dates printed on your document" in first.retake_message
    last = document(disagreeing, attempts_so_far=2)
    assert (last.to_status, last.reason, last.results) == ("denied", "document_invalid", None)


@pytest.mark.parametrize(
    "variant",
    [
        {},
        {"checks_valid": False, "problem": "check digit"},
        {"zones_agree": False},
        {"zones_agree": True},
        {"expiry_date": datetime.date(2020, 1, 1)},
        {"expiry_date": None},
    ],
)
def test_a_document_is_accepted_exactly_when_its_own_checks_let_the_decision_go_on(variant):
    """What may be kept for a retake of the head turns alone (sessions_api.evidence) is what decide_document accepts."""
    data = dataclasses.replace(passport(datetime.date(1990, 1, 1)), **variant)

    decided = document(data)

    assert document_accepted(data, today=TODAY) is (not decided.is_retake), variant
    assert document_accepted(Retake("unreadable"), today=TODAY) is False
