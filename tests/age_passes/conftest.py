"""Fixtures for age passes: the onboarded tenant's policy, a browser in the flow of a live session."""

import pytest

from age_passes.models import AgePassPolicy
from tests.support.flow import open_flow


@pytest.fixture
def policy(onboarded):
    return AgePassPolicy.objects.create(tenant=onboarded.tenant, offer_saving=True, accept_passes=True)


@pytest.fixture
def live_visitor(api):
    return open_flow(api, callback_url="https://shop.example.com/done")


@pytest.fixture(autouse=True)
def _face_path_on(face_path_on):
    """The first page offers the selfie: the face path is on at every limit."""
