"""AAMVA DL/ID card design standard: the PDF417 payload on North American driving licences.

Layout: compliance indicator "@", data element separator (LF), record separator (RS), segment
terminator (CR), file type "ANSI " (or "AAMVA"), issuer identification number (6 digits),
AAMVA version (2), jurisdiction version (2, from version 02), number of subfiles (2), then one
designator per subfile (type, 4-digit offset, 4-digit length). A subfile starts with its type
("DL", "ID", or a jurisdiction's "Z?") and holds elements: a 3-letter id and its value, one per
line. We need DBB (date of birth) and DBA (expiry); DCG (country) settles the date format,
MMDDCCYY in the USA and CCYYMMDD in Canada (and in version 01 everywhere).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

# Issuers vary the separators after "@" (LF, RS or FS, CR) and the space after "ANSI".
_HEADER = re.compile(rb"@[\n\x1c\x1e\r]{0,4}(ANSI ?|AAMVA)(\d{6})(\d{2})")
_ELEMENT = re.compile(r"^(D[A-Z]{2})(.*)$")
# Issuer identification numbers of Canadian jurisdictions (AAMVA IIN list).
_CANADIAN_IINS = {
    "604426",
    "604427",
    "604428",
    "604429",
    "604430",
    "604431",
    "604432",
    "604433",
    "636012",
    "636016",
    "636017",
    "636028",
    "636044",
    "636048",
}


class AamvaFormatError(ValueError):
    """The payload is not an AAMVA DL/ID barcode."""


@dataclass(frozen=True)
class AamvaRecord:
    issuer: str  # IIN
    version: int
    elements: dict[str, str]
    birthdate: datetime.date | None
    expiry_date: datetime.date | None
    problems: tuple[str, ...]

    @property
    def checks_valid(self) -> bool:
        return not self.problems


def parse_aamva(payload: bytes) -> AamvaRecord:
    """Parse an AAMVA payload (the barcode's raw bytes)."""
    header = _HEADER.search(payload[:64])
    if header is None:
        raise AamvaFormatError("no AAMVA header")
    issuer = header.group(2).decode("ascii")
    version = int(header.group(3))
    text = payload[header.start() :].decode("latin-1")
    elements = _elements(text, header.end() - header.start())
    if not elements:
        raise AamvaFormatError("no DL or ID subfile")
    country = elements.get("DCG", "").strip().upper()
    canadian = country == "CAN" or (not country and issuer in _CANADIAN_IINS)
    problems = []
    birthdate = _date(elements.get("DBB"), version=version, canadian=canadian)
    expiry_date = _date(elements.get("DBA"), version=version, canadian=canadian)
    if "DBB" not in elements:
        problems.append("DBB (birth date) missing")
    elif birthdate is None:
        problems.append("DBB (birth date) is not a date")
    if "DBA" not in elements:
        problems.append("DBA (expiry date) missing")
    elif expiry_date is None:
        problems.append("DBA (expiry date) is not a date")
    return AamvaRecord(issuer, version, elements, birthdate, expiry_date, tuple(problems))


def _elements(text: str, header_length: int) -> dict[str, str]:
    """Elements of the first DL or ID subfile, found by scanning for its type marker.

    Issuers get the designators' offsets wrong often enough that we do not rely on them.
    """
    body = text[header_length:]
    match = re.search(r"(DL|ID)\n?(?=D[A-Z]{2})", body)
    if match is None:
        return {}
    elements: dict[str, str] = {}
    for raw in re.split(r"[\n\r\x1e]", body[match.end() :]):
        found = _ELEMENT.match(raw.strip())
        if found is None:
            if raw.startswith("Z"):
                break  # the jurisdiction's own subfile follows
            continue
        elements.setdefault(found.group(1), found.group(2).strip())
    return elements


def _date(value: str | None, *, version: int, canadian: bool) -> datetime.date | None:
    if value is None:
        return None
    digits = value.strip()
    if not re.fullmatch(r"\d{8}", digits):
        return None
    usa = _try_date(int(digits[4:8]), int(digits[0:2]), int(digits[2:4]))  # MMDDCCYY
    iso = _try_date(int(digits[0:4]), int(digits[4:6]), int(digits[6:8]))  # CCYYMMDD
    if canadian or version <= 1:
        return iso or usa
    return usa or iso


def _try_date(year: int, month: int, day: int) -> datetime.date | None:
    if not 1900 <= year <= 2199:
        return None
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return None
