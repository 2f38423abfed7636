"""Fixtures for age passes: the onboarded tenant's policy, a browser in the flow of a live session."""

import pytest

from age_passes.models import AgePassPolicy
from age_passes.services import age_pass_save_right_issue
from flow.age_pass import SAVE_RIGHT_COOKIE
from tests.support.flow import open_flow


def save_right_give(visitor) -> None:
    """Give the visitor's browser the right to save a pass that its approving submission would have set
    (tests that approve through the state machine; test_save_right.py has the submissions themselves)."""
    visitor.client.cookies[SAVE_RIGHT_COOKIE] = age_pass_save_right_issue(session=visitor.session)


@pytest.fixture
def policy(onboarded):
    return AgePassPolicy.objects.create(tenant=onboarded.tenant, offer_saving=True, accept_passes=True)


@pytest.fixture
def live_visitor(api):
    return open_flow(api, callback_url="https://shop.example.com/done")


@pytest.fixture(autouse=True)
def _face_path_on(face_path_on):
    """The first page offers the selfie: the face path is on at every limit."""
