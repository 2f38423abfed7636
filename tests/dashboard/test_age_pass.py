"""The dashboard shows what an age pass proved as the API does: the method, the session's limit, a proof age."""

from sessions_api.state_machine import Results, session_transition
from tests.factories import VerificationSessionFactory


def test_the_session_page_shows_the_pass_s_method_limit_and_proof_age_bucket_only(dashboard, onboarded):
    session = VerificationSessionFactory(tenant=onboarded.tenant, mode="live", age_limit=18)
    session_transition(session_id=session.id, to="processing", cause="age pass presented")
    session_transition(
        session_id=session.id,
        to="approved",
        reason="age_pass",
        cause="age pass used",
        results=Results(age_pass={"method": "document", "thresholds": [18], "proof_age": "under_3_months"}),
    )

    page = dashboard.get(f"/dashboard/sessions/{session.id}/").content.decode()

    result = page.split('id="age-pass-result"', 1)[1].split("</dl>", 1)[0]
    assert 'data-field="method">Identity document<' in result
    assert 'data-field="thresholds">18<' in result
    assert 'data-field="proofAge">Less than three months<' in result
    assert "Proved on" not in result and "Valid until" not in result
