"""The dashboard shows the digital-ID method: on a session's page and in the usage panel's approvals by method."""

from sessions_api.state_machine import Results, session_transition
from tests.factories import VerificationSessionFactory, finished_session


def _digital_id_session(tenant, *, value=True):
    session = VerificationSessionFactory(tenant=tenant, mode="live")
    session_transition(session_id=session.id, to="processing", cause="digital ID")
    session_transition(
        session_id=session.id,
        to="approved" if value else "denied",
        reason="digital_id" if value else "underage_digital_id",
        cause="digital ID",
        results=Results(
            age_credential={
                "kind": "mdoc",
                "doc_type": "eu.europa.ec.av.1",
                "claim": "age_over_18",
                "value": value,
                "issuer_country": "UT",
                "trust_source": "pem:utopia",
            }
        ),
    )
    return session


def test_the_session_page_shows_what_the_digital_id_proved(dashboard, onboarded):
    session = _digital_id_session(onboarded.tenant)
    page = dashboard.get(f"/dashboard/sessions/{session.id}/").content.decode()
    assert "Approved by digital ID" in page
    result = page.split('id="digital-id-result"', 1)[1].split("</dl>", 1)[0]
    assert "age_over_18" in result and ">true<" in result
    assert "eu.europa.ec.av.1" in result and "UT · pem:utopia" in result


def test_an_underage_digital_id_is_shown_as_such(dashboard, onboarded):
    session = _digital_id_session(onboarded.tenant, value=False)
    page = dashboard.get(f"/dashboard/sessions/{session.id}/").content.decode()
    assert "Underage (digital ID)" in page and ">false<" in page


def test_the_usage_panel_counts_approvals_by_method(dashboard, onboarded):
    _digital_id_session(onboarded.tenant)
    _digital_id_session(onboarded.tenant)
    finished_session(onboarded.tenant, status="approved")
    _digital_id_session(onboarded.tenant, value=False)

    page = dashboard.get("/dashboard/").content.decode()
    methods = page.split('id="usage-methods"', 1)[1].split("</p>", 1)[0]
    assert '<span data-method="digital_id">Digital ID 2</span>' in methods
    assert '<span data-method="age_estimation">Face 1</span>' in methods
    assert '<span data-method="document">Document 0</span>' in methods
