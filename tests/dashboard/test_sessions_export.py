"""The session list's CSV export: the list's filters, streamed, safe in a spreadsheet, nothing of a redaction."""

import csv
import html
import io
import re

from tests.factories import finished_session
from tests.support.api_client import ApiClient

PERSONAL = "holder-4711"


def _export(dashboard, **query):
    response = dashboard.get("/dashboard/sessions/export.csv", query)
    assert response.status_code == 200, response.content
    assert response.streaming  # produced row by row, never held whole
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="sessions-')
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text))), text


def test_the_export_holds_exactly_the_sessions_the_filters_select_past_the_first_page(dashboard, onboarded, rival):
    denied = {finished_session(onboarded.tenant, status="denied", subject=f"gamer-{n}").id for n in range(27)}
    finished_session(onboarded.tenant, status="approved", subject="gamer-approved")
    finished_session(onboarded.tenant, status="denied", mode="test", subject="gamer-sandbox")
    finished_session(onboarded.tenant, status="denied", subject="someone-else")
    finished_session(rival.tenant, status="denied", subject="gamer-of-rival")

    rows, _ = _export(dashboard, status="denied", mode="live", q="gamer", p="2")  # the list's page: not the export's

    assert {row["session_id"] for row in rows} == denied  # 27: more than the list's 25 a page, none more
    assert {(row["status"], row["mode"], row["reason"]) for row in rows} == {("denied", "live", "liveness_failed")}
    assert [row["created_at"] for row in rows] == sorted((row["created_at"] for row in rows), reverse=True)
    everything, text = _export(dashboard)
    assert len(everything) == 30 and "gamer-of-rival" not in text


def test_the_list_offers_the_export_of_what_it_shows(dashboard, onboarded):
    finished_session(onboarded.tenant, status="denied")
    page = dashboard.get("/dashboard/sessions/", {"status": "denied", "q": "a b", "p": "1"}).content.decode()

    link = html.unescape(re.search(r'<a [^>]*id="sessions-export" href="([^"]+)"', page).group(1))

    assert link == "/dashboard/sessions/export.csv?status=denied&q=a+b"
    unfiltered = dashboard.get("/dashboard/sessions/").content.decode()
    assert 'id="sessions-export" href="/dashboard/sessions/export.csv"' in unfiltered


def test_cells_that_a_spreadsheet_would_run_as_formulas_stay_text(dashboard, onboarded):
    live = ApiClient(onboarded.live_key)
    for subject in ('=HYPERLINK("https://evil.example","x")', "+41 79", "-2+3", "@SUM(A1:A9)"):
        live.create_session(subject=subject, metadata={"note": "=1+1"})

    rows, _ = _export(dashboard)

    assert sorted(row["subject"] for row in rows) == [
        "'+41 79",
        "'-2+3",
        '\'=HYPERLINK("https://evil.example","x")',
        "'@SUM(A1:A9)",
    ]
    assert {row["metadata"] for row in rows} == {'{"note": "=1+1"}'}  # a JSON object's first character is "{"


def test_a_redacted_sessions_row_shows_nothing_personal(dashboard, onboarded):
    live = ApiClient(onboarded.live_key)
    session_id = live.create_session(subject=PERSONAL, metadata={"orderId": "A-1042"})["sessionId"]
    live.post(f"/v1/sessions/{session_id}/cancel")
    live.post(f"/v1/sessions/{session_id}/redact")

    (row,), text = _export(dashboard)

    assert (row["session_id"], row["status"], row["reason"]) == (session_id, "denied", "cancelled")
    assert row["subject"] == "" and row["metadata"] == "" and row["redacted_at"]
    assert PERSONAL not in text and "A-1042" not in text


def test_a_filter_that_cannot_apply_exports_nothing(dashboard, onboarded):
    finished_session(onboarded.tenant, subject="gamer-1")

    unusable = ({"status": "lost"}, {"from": "today"}, {"from": "2026-02-02", "to": "2026-01-01"}, {"colour": "red"})
    for query in unusable:
        response = dashboard.get("/dashboard/sessions/export.csv", query)
        assert response.status_code == 400, query
        assert "gamer-1" not in response.content.decode()


def test_the_export_needs_a_signed_in_member(client, onboarded):
    finished_session(onboarded.tenant, subject="gamer-1")
    response = client.get("/dashboard/sessions/export.csv")
    assert response.status_code == 302 and "/dashboard/login/" in response["Location"]
