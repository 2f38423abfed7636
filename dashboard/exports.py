"""The session list as CSV: streamed row by row, each cell safe to open in a spreadsheet, nothing of a redaction."""

import csv
import json
from collections.abc import Iterable, Iterator

from sessions_api.models import VerificationSession
from sessions_api.timestamps import iso_ms

COLUMNS = (
    "session_id",
    "created_at",
    "mode",
    "status",
    "reason",
    "age_limit",
    "subject",
    "metadata",
    "opened_at",
    "finalized_at",
    "redacted_at",
    "selfie_attempts",
    "document_attempts",
)
# A cell starting so is read as a formula by Excel, LibreOffice and Google Sheets (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
ROWS_PER_QUERY = 500


def spreadsheet_safe(value) -> str:
    """The cell as text; one that would start a formula is prefixed with an apostrophe, so it stays text."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def session_row(session: VerificationSession) -> list:
    redacted = session.redacted_at is not None  # erased already; said again here so no export can bring it back
    return [
        session.id,
        iso_ms(session.created_at),
        session.mode,
        session.status,
        session.reason,
        session.age_limit,
        "" if redacted else session.subject,
        "" if redacted or not session.metadata else json.dumps(session.metadata, ensure_ascii=False, sort_keys=True),
        iso_ms(session.opened_at),
        iso_ms(session.finalized_at),
        iso_ms(session.redacted_at),
        session.selfie_attempts,
        session.document_attempts,
    ]


class _Line:
    """What csv.writer writes to: it hands each formatted line back instead of keeping it."""

    def write(self, line: str) -> str:
        return line


def sessions_csv(sessions: Iterable[VerificationSession]) -> Iterator[str]:
    """The header, then one line per session, produced as the response is sent (never the whole file in memory)."""
    writer = csv.writer(_Line())
    yield writer.writerow(COLUMNS)
    for session in sessions:
        yield writer.writerow([spreadsheet_safe(cell) for cell in session_row(session)])
