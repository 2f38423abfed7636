"""Consistency between a document's zones: the printed dates (visual zone) against the machine-readable ones.

The data page of a passport, or the front of an ID card or licence, prints the date of birth and the
expiry date beside labels ("Date of birth", "DOB", "Expiry", "EXP", ...). Tesseract reads that text
offline; a date that follows a birth or expiry label is compared with the MRZ's or barcode's. Only
labelled dates count (issue dates and others are ignored), and a date the OCR could not read checks
nothing: the zones disagree only when a labelled printed date was read and differs from the machine-
readable one. Day-month order is ambiguous in print (29/02/1996 in Europe, 02/29/1996 in the USA):
either reading agrees.
"""

from __future__ import annotations

import datetime
import logging
import re
from dataclasses import dataclass

import numpy as np
from PIL import Image

logger = logging.getLogger(__name__)

_OCR_MAX_SIDE = 2400
_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("JAN", "JANV", "ENE", "GEN", "STY"),
            ("FEB", "FEV", "FÉV", "FEBR", "LUT"),
            ("MAR", "MARS", "MRZ", "MAA"),
            ("APR", "AVR", "ABR", "KWI"),
            ("MAY", "MAI", "MAG", "MEI", "MAJ"),
            ("JUN", "JUIN", "GIU", "CZE"),
            ("JUL", "JUIL", "LUG", "LIP"),
            ("AUG", "AOU", "AOÛT", "AGO", "SIE"),
            ("SEP", "SEPT", "SET", "WRZ"),
            ("OCT", "OKT", "OTT", "OUT", "PAZ"),
            ("NOV", "LIS"),
            ("DEC", "DÉC", "DEZ", "DIC", "GRU"),
        ),
        start=1,
    )
    for name in names
}
_BIRTH_LABELS = ("BIRTH", "DOB", "GEBURT", "NAISSANCE", "NACIMIENTO", "NASCITA", "GEBOORTE", "URODZENIA", "NASCIMENTO")
_EXPIRY_LABELS = (
    "EXPIR",
    "EXP",
    "VALID UNTIL",
    "GÜLTIG BIS",
    "GULTIG BIS",
    "ABLAUF",
    "CADUCIDAD",
    "SCADENZA",
    "VERVAL",
    "WAŻNOŚCI",
    "VALIDADE",
)

_NUMERIC = re.compile(r"(?<!\d)(\d{1,2})[./\- ](\d{1,2})[./\- ](\d{4}|\d{2})(?!\d)")
_ISO = re.compile(r"(?<!\d)(\d{4})[./\-](\d{1,2})[./\-](\d{1,2})(?!\d)")
_WORDED = re.compile(r"(?<!\d)(\d{1,2})[ .]+([A-ZÀ-Ý]{3,5})(?:/[A-ZÀ-Ý]{3,5})?[ .]+(\d{4}|\d{2})(?!\d)")


@dataclass(frozen=True)
class PrintedDates:
    birth: list[datetime.date]  # every reading of dates printed after a birth label
    expiry: list[datetime.date]


def zones_agree(images: list[bytes], *, birthdate: datetime.date, expiry_date: datetime.date | None) -> bool:
    """False only when a labelled printed date was read and differs from the machine-readable one."""
    from checks.images import ImageRejected, open_image

    for data in images:
        try:
            printed = printed_dates(open_image(data))
        except ImageRejected:
            continue
        if printed.birth and birthdate not in printed.birth:
            logger.info("printed birth date %s disagrees with the machine-readable one", printed.birth)
            return False
        if printed.expiry and expiry_date is not None and expiry_date not in printed.expiry:
            logger.info("printed expiry date %s disagrees with the machine-readable one", printed.expiry)
            return False
    return True


def printed_dates(picture: Image.Image) -> PrintedDates:
    return dates_after_labels(_ocr(picture))


def dates_after_labels(text: str) -> PrintedDates:
    """The dates on a label's line (after it) or, when there is none, on the next line."""
    lines = [line.strip().upper() for line in text.splitlines() if line.strip()]
    birth: list[datetime.date] = []
    expiry: list[datetime.date] = []
    for index, line in enumerate(lines):
        for labels, found in ((_BIRTH_LABELS, birth), (_EXPIRY_LABELS, expiry)):
            position = _label_end(line, labels)
            if position is None:
                continue
            dates = _dates(line[position:])
            if not dates and index + 1 < len(lines):
                dates = _dates(lines[index + 1])
            found.extend(dates[:2])  # an ambiguous day-month order gives two readings of one date
    return PrintedDates(birth=birth, expiry=expiry)


def _label_end(line: str, labels: tuple[str, ...]) -> int | None:
    for label in labels:
        match = re.search(rf"\b{re.escape(label)}", line)
        if match:
            return match.end()
    return None


def _dates(text: str) -> list[datetime.date]:
    """Every reading of the first date in text (two when its day and month may be swapped)."""
    for pattern, order in ((_ISO, "ymd"), (_WORDED, "dMy"), (_NUMERIC, "dmy")):
        match = pattern.search(text)
        if not match:
            continue
        a, b, c = match.groups()
        if order == "ymd":
            return _valid([(int(a), int(b), int(c))])
        if order == "dMy":
            month = _MONTHS.get(b)
            return _valid([(_year(c), month, int(a))]) if month else []
        return _valid([(_year(c), int(b), int(a)), (_year(c), int(a), int(b))])
    return []


def _year(text: str) -> int:
    if len(text) == 4:
        return int(text)
    # Two-digit years: the nearest century that keeps the date within 80 years back, 20 forward.
    this_year = datetime.date.today().year
    year = 2000 + int(text)
    return year if year <= this_year + 20 else year - 100


def _valid(candidates) -> list[datetime.date]:
    dates = []
    for year, month, day in candidates:
        try:
            value = datetime.date(year, month, day)
        except (TypeError, ValueError):
            continue
        if value not in dates:
            dates.append(value)
    return dates


def _ocr(picture: Image.Image) -> str:
    import pytesseract
    from pytesseract import TesseractError

    grey = picture.convert("L")
    longest = max(grey.size)
    if longest > _OCR_MAX_SIDE:
        scale = _OCR_MAX_SIDE / longest
        grey = grey.resize((round(grey.width * scale), round(grey.height * scale)), Image.Resampling.LANCZOS)
    try:
        # image_to_string writes its input to a temporary file and deletes it (as checks.document's OCR does).
        return pytesseract.image_to_string(np.asarray(grey), config="--psm 11")
    except TesseractError:
        logger.warning("tesseract failed on a document's printed zone", exc_info=True)
        return ""
