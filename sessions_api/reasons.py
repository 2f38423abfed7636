"""What each `reason` of a final session means and what the partner should do about it.

One text per reason, shown in the OpenAPI schema (the `reason` field) and printed in the reason
table of docs/errors.md; tests/docs/test_reasons.py holds that page to these texts and to every reason the code knows.
"""

from .choices import Reason, Status


class ReasonGuide:
    def __init__(self, status: str, meaning: str, action: str):
        self.status, self.meaning, self.action = status, meaning, action


GUIDE: dict[str, ReasonGuide] = {
    Reason.AGE_ESTIMATION: ReasonGuide(
        Status.APPROVED,
        "A live selfie's estimated age cleared the calibrated policy for the age limit.",
        "Grant access; `ageEstimation` and `liveness` hold the numbers.",
    ),
    Reason.DOCUMENT: ReasonGuide(
        Status.APPROVED,
        "A valid, unexpired identity document shows the user is at least the age limit.",
        "Grant access; `validateDoc` holds the age read from the document.",
    ),
    Reason.AGE_PASS: ReasonGuide(
        Status.APPROVED,
        "The user showed an age pass saved on their device after an earlier approval (a passkey, with user "
        "verification), and it proves the limit.",
        "Grant access; `agePass` holds how the age was proved, the session's limit it proved and how long ago.",
    ),
    Reason.LIVENESS_FAILED: ReasonGuide(
        Status.DENIED,
        "The head turns did not show a live person following the challenge, on the document step's last "
        "attempt (a user whose three selfies were not live is offered the document step first).",
        "Do not grant access; the user may start a new session (a new attempt is a new session).",
    ),
    Reason.DOCUMENT_INVALID: ReasonGuide(
        Status.DENIED,
        "The document's machine-readable data did not validate (check digits, fields).",
        "Do not grant access; offer a new session with another document.",
    ),
    Reason.DOCUMENT_EXPIRED: ReasonGuide(
        Status.DENIED,
        "The document was readable but past its expiry date.",
        "Do not grant access; ask the user to use a valid document in a new session.",
    ),
    Reason.UNDERAGE_DOCUMENT: ReasonGuide(
        Status.DENIED,
        "The document shows the user is younger than the age limit.",
        "Do not grant access; do not offer an immediate retry.",
    ),
    Reason.DOCUMENT_MISMATCH: ReasonGuide(
        Status.DENIED,
        "The live face did not match the portrait on the document (holder match), on the last attempt.",
        "Do not grant access; `validateDoc.holderMatch.score` shows how far off it was. Offer a new session "
        "with the user's own document.",
    ),
    Reason.DIGITAL_ID: ReasonGuide(
        Status.APPROVED,
        "A wallet credential (EU age attestation or mobile driving licence) proved `age_over_NN` "
        "for the limit, verified offline against a trusted issuer.",
        "Grant access; `ageCredential` holds what was proved (`validateDoc` stays `null`: no birth date is read).",
    ),
    Reason.UNDERAGE_DIGITAL_ID: ReasonGuide(
        Status.DENIED,
        "A wallet credential proved the user is under the age limit (`age_over_NN` false with NN "
        "at or below the limit).",
        "Do not grant access; do not offer an immediate retry.",
    ),
    Reason.ATTEMPTS_EXCEEDED: ReasonGuide(
        Status.DENIED,
        "Three attempts at the document step gave nothing usable (no face, unreadable document), "
        "or too many uploads were refused (three selfies that gave nothing lead to the document step).",
        "Do not grant access; the user may try again later in a new session, with better light.",
    ),
    Reason.CANCELLED: ReasonGuide(
        Status.DENIED,
        "The user chose Cancel in the flow, or you cancelled it (`POST /v1/sessions/{id}/cancel`).",
        "Nothing was decided about the age; offer to start again.",
    ),
    Reason.EXPIRED: ReasonGuide(
        Status.DENIED,
        "The session was not completed before `expiresAt`.",
        "Nothing was decided about the age; create a new session when the user comes back.",
    ),
}


def reason_table_markdown() -> str:
    """The reason table of docs/errors.md, as it must read."""
    lines = ["| reason | status | what it means | what to do |", "|---|---|---|---|"]
    for reason, guide in GUIDE.items():
        lines.append(f"| `{reason}` | `{guide.status}` | {guide.meaning} | {guide.action} |")
    return "\n".join(lines)


def reason_description() -> str:
    """The OpenAPI description of the `reason` field."""
    rows = "\n".join(
        f"- `{reason}` ({guide.status}): {guide.meaning} {guide.action}" for reason, guide in GUIDE.items()
    )
    return "`null` while the session is open; once it is final, why:\n\n" + rows
