"""The funnel page: sessions created through the API and taken through the hosted flow, counted step by step."""

import re

import pytest

from tests.factories import finished_session, session_created_days_ago
from tests.support.flow import open_flow


def _funnel(dashboard, **query) -> tuple[dict[str, tuple[int, str]], str]:
    """{step: (count, dropped)} from the page's table, and the page."""
    response = dashboard.get("/dashboard/funnel/", query)
    assert response.status_code == 200
    page = response.content.decode()
    rows = re.findall(
        r'<tr data-step="(\w+)"><th scope="row">[^<]+</th><td data-field="count">(\d+)</td>\s*'
        r'<td data-field="dropped">([^<]*)</td>',
        page,
    )
    return {step: (int(count), dropped) for step, count, dropped in rows}, page


def _sandbox_visitor(sandbox_api, *, opened=True, consented=False, outcomes=()):
    """A test session created through the API, its link opened and the flow followed as far as asked."""
    visitor = open_flow(sandbox_api, subject="player-1")
    if opened:
        assert visitor.client.get("/flow/").status_code == 200  # the consent page
    if consented:
        assert visitor.client.get("/flow/sandbox").status_code == 200  # its "I agree, continue"
    for outcome in outcomes:
        assert visitor.client.post("/flow/sandbox", {"outcome": outcome}).status_code == 303
    return visitor


@pytest.fixture
def _test_sessions(sandbox_api, onboarded, rival, face_path_on):
    open_flow(sandbox_api)  # created, its link followed, its first page never shown: not opened
    _sandbox_visitor(sandbox_api)  # opened, stopped on the consent page
    _sandbox_visitor(sandbox_api, consented=True)  # stopped on the outcome buttons
    _sandbox_visitor(sandbox_api, consented=True, outcomes=["approved"])  # approved by the face
    _sandbox_visitor(sandbox_api, consented=True, outcomes=["requires_doc"])  # asked for a document, left
    _sandbox_visitor(sandbox_api, consented=True, outcomes=["requires_doc", "approved"])  # approved by document
    cancelled = _sandbox_visitor(sandbox_api)
    assert cancelled.client.post("/flow/cancel").status_code in (302, 303)  # opened, then cancelled: not decided
    # Neither another mode, nor another tenant, nor a session older than the period counts.
    finished_session(onboarded.tenant, status="approved", mode="live")
    finished_session(rival.tenant, status="approved", mode="test")
    old = finished_session(onboarded.tenant, status="approved", mode="test")
    session_created_days_ago(old.pk, 10)


@pytest.mark.usefixtures("_test_sessions")
def test_the_funnel_counts_each_step_of_the_sessions_created_and_the_drop_off(dashboard):
    steps, page = _funnel(dashboard, mode="test", period="7")

    assert steps == {
        "created": (7, "—"),
        "opened": (6, "1 of 7"),
        "consented": (4, "2 of 6"),
        "captured": (3, "1 of 4"),
        "document": (1, "1 of 2 asked for one"),
        "decided": (2, "1 of 3"),
    }
    methods = re.search(r'id="funnel-methods">(.*?)</p>', page, re.S).group(1)
    assert re.findall(r'data-method="([^"]+)">[^<]*?(\d+)<', methods) == [
        ("Face", "1"),
        ("Document", "1"),
        ("Digital ID", "0"),
        ("Age pass", "0"),
    ]
    median = re.search(r'id="funnel-median">([^<]+)<', page).group(1)
    assert re.fullmatch(r"\d+ s", median), median  # two decisions, each within seconds of its opening


@pytest.mark.usefixtures("_test_sessions")
def test_the_period_and_the_mode_choose_the_sessions_counted(dashboard):
    assert _funnel(dashboard, mode="test", period="30")[0]["created"] == (8, "—")  # with the one of 10 days ago
    live, page = _funnel(dashboard)  # live, 30 days: the default
    assert (live["created"], live["decided"]) == ((1, "—"), (1, "0 of 1"))
    assert 'aria-current="true">30 days</a>' in page and 'aria-current="true">Live</a>' in page
    assert _funnel(dashboard, mode="nonsense", period="5")[0]["created"] == (1, "—")  # unknown: the defaults


@pytest.mark.usefixtures("_test_sessions")
def test_the_chart_is_svg_drawn_by_the_service_with_a_bar_per_step(dashboard):
    _, page = _funnel(dashboard, mode="test", period="7")
    chart = re.search(r'<figure class="av-chart av-chart--funnel">(.*?)</figure>', page, re.S).group(1)

    assert re.findall(r'<g class="av-funnel__row" data-step="(\w+)">', chart) == [
        "created",
        "opened",
        "consented",
        "captured",
        "document",
        "decided",
    ]
    bars = re.findall(r'data-count="(\d+)" x="\d+" y="[\d.]+" width="([\d.]+)"', chart)
    assert [int(count) for count, _ in bars] == [7, 6, 4, 3, 1, 2]
    widths = [float(width) for _, width in bars]
    assert widths[:4] == sorted(widths[:4], reverse=True) and widths[0] > widths[-1] > 0  # as long as their counts
    assert widths[1] / widths[0] == pytest.approx(6 / 7, abs=0.01)
    assert "<script" not in chart and "http" not in chart  # nothing fetched, nothing run


def test_an_empty_period_says_so_without_a_made_up_rate(dashboard):
    steps, page = _funnel(dashboard, mode="test")
    assert steps["created"] == (0, "—") and steps["opened"] == (0, "—")
    assert re.search(r'id="funnel-median">—<', page)
