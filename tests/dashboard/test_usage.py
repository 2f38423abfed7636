"""The usage panel: sessions per day by final status over 30 days, drawn as SVG, and the approval rate."""

import re

from dashboard.charts import nice_step
from tests.factories import finished_session, session_created_days_ago


def _on_day(session, days_ago):
    session_created_days_ago(session.pk, days_ago)


def test_the_panel_counts_each_days_sessions_by_final_status_and_the_approval_rate(dashboard, onboarded):
    for status, days_ago in [
        ("approved", 0),
        ("approved", 0),
        ("denied", 0),
        ("approved", 3),
        ("initiated", 3),
        ("denied", 29),
        ("approved", 30),
    ]:  # 30 days ago is outside the window
        _on_day(finished_session(onboarded.tenant, status=status), days_ago)
    finished_session(onboarded.tenant, status="denied", mode="test")

    page = dashboard.get("/dashboard/").content.decode()

    assert '<dd id="usage-total">6</dd>' in page
    assert '<dd id="approval-rate">60.0 %</dd>' in page  # 3 approved of 5 finished; open ones do not count
    table = page.split('id="usage-table"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><th scope=\"row\">[^<]+</th><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>", table)
    assert len(rows) == 30
    assert rows[0] == ("2", "1", "0") and rows[3] == ("1", "0", "1") and rows[29] == ("0", "1", "0")
    bars = re.findall(r'class="av-bar av-bar--(\w+)" data-count="(\d+)"', page)
    expected = [("approved", "2"), ("denied", "1"), ("approved", "1"), ("open", "1"), ("denied", "1")]
    assert sorted(bars) == sorted(expected)


def test_the_test_mode_panel_counts_sandbox_sessions(dashboard, onboarded):
    finished_session(onboarded.tenant, status="denied", mode="test")

    page = dashboard.get("/dashboard/", {"usage": "test"}).content.decode()

    assert '<dd id="usage-total">1</dd>' in page and '<dd id="approval-rate">0.0 %</dd>' in page


def test_with_no_finished_session_the_rate_is_a_dash_not_zero(dashboard, onboarded):
    page = dashboard.get("/dashboard/").content.decode()

    assert '<dd id="approval-rate">—</dd>' in page
    assert "<svg" in page and "<script" not in page.split("<svg", 1)[1].split("</svg>", 1)[0]


def test_chart_steps_are_round_numbers():
    assert [nice_step(n) for n in (1, 4, 5, 9, 23, 180, 1000)] == [1, 1, 2, 5, 10, 50, 500]


def test_the_usage_panel_names_each_method_in_words(dashboard, onboarded, sandbox_api):
    session = sandbox_api.create_session(age_limit=18)
    sandbox_api.post(f"/v1/test/sessions/{session['sessionId']}/advance", {"to": "approved", "reason": "age_pass"})

    page = dashboard.get("/dashboard/?usage=test").content.decode()

    methods = page.split('id="usage-methods"', 1)[1].split("</p>", 1)[0]
    shown = re.sub(r"<[^>]+>", "", methods).split(":", 1)[1].split()
    assert " ".join(shown) == "Face 0 · Document 0 · Digital ID 0 · Age pass 1"
