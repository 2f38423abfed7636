"""The assurance an approval was proved under, kept with its pass, and whether a tenant's settings accept it.

A lax tenant's approvals must not become strong passes elsewhere: a pass records, for a document, whether
the presence checks ran; for a face, the approving tenant's extra years and the confidence reached; and
the liveness signals that only flagged. Each accepting tenant holds them against its own settings.
"""

from sessions_api.models import LivenessResult, Reason, VerificationSession
from tenants.models import Tenant

from .models import AgePass, Method


def assurance_proved(session: VerificationSession) -> dict:
    """AgePass's assurance fields for a pass saved after the session's approval."""
    liveness = LivenessResult.objects.filter(session_id=session.id).first()
    flagged = {"flagged_signals": list(liveness.signals) if liveness is not None else []}
    if session.reason == Reason.DOCUMENT:
        document = session.document
        return {
            "liveness_checked": bool(document.liveness_checked),
            "holder_matched": bool(document.holder_match_passed),
            **flagged,
        }
    if session.reason == Reason.AGE_ESTIMATION:
        return {
            "extra_years": session.tenant.age_extra_years,
            "age_confidence": session.age_estimation.age_confidence,
            **flagged,
        }
    return flagged


def assurance_shortfall(age_pass: AgePass, tenant: Tenant) -> str | None:
    """The refusal code when the pass was proved under laxer settings than the tenant's own, else None.
    Unrecorded assurance (a pass saved before it was kept) counts as the weakest."""
    if age_pass.method == Method.DOCUMENT and tenant.document_presence_required:
        if not (age_pass.liveness_checked and age_pass.holder_matched):
            return "presence_not_proved"
    if age_pass.method == Method.FACE:
        if (age_pass.extra_years or 0) < tenant.age_extra_years:
            return "extra_years_not_proved"
        if (age_pass.age_confidence or 0.0) < tenant.min_age_confidence:
            return "confidence_not_proved"
    if set(age_pass.flagged_signals) - set(tenant.liveness_flag_only):
        return "signal_not_accepted"
    return None
