"""ICAO 9303 machine-readable zones (TD1 ID cards, TD3 passports): layout, check digits, dates.

We verify every check digit ourselves and read only the data lines: the name line is never used
for a decision. Dates in an MRZ have two-digit years; a birth date is placed in the most recent
century that does not put it in the future, an expiry date in 2000-2099 unless that is more than
20 years ahead (then 1900-1999).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

_CHARACTER_VALUES = {
    **{str(digit): digit for digit in range(10)},
    **{chr(ord("A") + index): 10 + index for index in range(26)},
    "<": 0,
}
_WEIGHTS = (7, 3, 1)
_MRZ_LINE = re.compile(r"[A-Z0-9<]+")

# Characters OCR confuses with digits, mapped back only where the layout demands a digit.
_AS_DIGIT = str.maketrans({"O": "0", "Q": "0", "D": "0", "I": "1", "L": "1", "Z": "2", "S": "5", "B": "8", "G": "6"})

TD1_LINE = 30
TD3_LINE = 44


class MrzFormatError(ValueError):
    """The text does not have the layout of a TD1 or TD3 MRZ."""


@dataclass(frozen=True)
class Mrz:
    kind: str  # "mrz_td1" | "mrz_td3"
    document_code: str
    birthdate: datetime.date | None  # None when the field is not a calendar date
    expiry_date: datetime.date | None
    failed_checks: tuple[str, ...]  # names of the check digits (or fields) that do not verify

    @property
    def checks_valid(self) -> bool:
        return not self.failed_checks and self.birthdate is not None


def check_digit(field: str) -> int:
    """ICAO 9303 check digit: weights 7, 3, 1 repeating; digits, A=10..Z=35, '<'=0; sum mod 10."""
    total = 0
    for position, character in enumerate(field):
        if character not in _CHARACTER_VALUES:
            raise ValueError(f"{character!r} cannot appear in an MRZ")
        total += _CHARACTER_VALUES[character] * _WEIGHTS[position % 3]
    return total % 10


def mrz_lines(text: str) -> list[str]:
    """The MRZ lines in OCR output, repaired to their exact length (TD1: 3 x 30, TD3: 2 x 44).

    Tesseract reads runs of '<' fillers imperfectly: it drops or adds a few, or reads one as 'K'.
    Fillers weigh 0 in every check digit and carry no data, so a filler run may be resized and
    its stray letters removed; data fields keep their characters and their check digits decide.
    """
    lines = [
        line
        for line in (raw.upper().replace(" ", "").replace("\u00ab", "<") for raw in text.splitlines())
        if "<" in line and _MRZ_LINE.fullmatch(line)
    ]
    for start in range(len(lines) - 2):
        window = lines[start : start + 3]
        if all(abs(len(line) - TD1_LINE) <= _LENGTH_SLACK for line in window[:2]):
            repaired = [_fit(line, TD1_LINE) for line in window]
            if repaired[0] is not None and repaired[1] is not None:
                return [repaired[0], repaired[1], repaired[2] or window[2][:TD1_LINE].ljust(TD1_LINE, "<")]
    for start in range(len(lines) - 1):
        first, second = lines[start : start + 2]
        if abs(len(second) - TD3_LINE) <= _LENGTH_SLACK and len(first) >= TD1_LINE:
            data = _fit(second, TD3_LINE)
            if data is not None:
                # The first line holds the names, which we never use: only its first two
                # characters (the document code) are read.
                return [_fit(first, TD3_LINE) or first[:TD3_LINE].ljust(TD3_LINE, "<"), data]
    raise MrzFormatError("no TD1 (3 x 30) or TD3 (2 x 44) block in the text")


_LENGTH_SLACK = 4
_FILLER_RUN = re.compile(r"<[<K]*(?:<|K+$)")


def _fit(line: str, length: int) -> str | None:
    """The line at exactly length characters, changing only runs of fillers, or None."""
    if len(line) == length and not re.search(r"<K|K<", line):
        return line
    # Stray letters inside a run of at least three fillers are misread fillers.
    runs = [m for m in _FILLER_RUN.finditer(line) if m.group().count("<") >= 3]
    cleaned = []
    position = 0
    for match in runs:
        cleaned.append(line[position : match.start()])
        cleaned.append(match.group().replace("K", ""))
        position = match.end()
    cleaned.append(line[position:])
    candidate = "".join(cleaned)
    difference = length - len(candidate)
    if difference == 0:
        return candidate
    # Resize the longest filler run (the trailing one on a tie) to make up the difference.
    runs = [m for m in re.finditer(r"<{3,}", candidate)]
    if not runs:
        return None
    longest = max(runs, key=lambda m: (len(m.group()), m.start()))
    new_length = len(longest.group()) + difference
    if new_length < 1:
        return None
    return candidate[: longest.start()] + "<" * new_length + candidate[longest.end() :]


def parse_mrz(text: str, *, today: datetime.date | None = None) -> Mrz:
    """Parse and verify the MRZ found in text (OCR output or exact lines)."""
    today = today or datetime.datetime.now(datetime.UTC).date()
    lines = mrz_lines(text)
    if len(lines) == 3:
        return _parse_td1(lines, today)
    return _parse_td3(lines, today)


def _parse_td3(lines: list[str], today: datetime.date) -> Mrz:
    first, second = lines
    number, number_check = second[0:9], second[9]
    birth, birth_check = _digits(second[13:19]), _digits(second[19])
    expiry, expiry_check = _digits(second[21:27]), _digits(second[27])
    optional, optional_check = second[28:42], second[42]
    composite_check = _digits(second[43])
    failed = []
    number = _document_number(number, number_check, failed)
    _verify("birth_date", birth, birth_check, failed)
    _verify("expiry_date", expiry, expiry_check, failed)
    # An all-filler optional field may carry '<' as its check digit (ICAO 9303-4, 4.2.2.2).
    if not (optional_check == "<" and set(optional) == {"<"}):
        _verify("optional_data", optional, optional_check, failed)
    composite = number + number_check + birth + birth_check + expiry + expiry_check + optional + optional_check
    _verify("composite", composite, composite_check, failed)
    return _result("mrz_td3", first[0:2], birth, expiry, failed, today)


def _parse_td1(lines: list[str], today: datetime.date) -> Mrz:
    first, second, _name_line = lines
    number, number_check, optional_1 = first[5:14], first[14], first[15:30]
    failed = []
    if number_check == "<":
        # Document numbers longer than 9 characters continue in the optional field, followed by
        # their check digit and a filler (ICAO 9303-5, 4.2.4).
        overflow = optional_1.split("<", 1)[0]
        if len(overflow) < 2:
            failed.append("document_number")
        else:
            _document_number(number + overflow[:-1], overflow[-1], failed)
    else:
        number = _document_number(number, number_check, failed)
        first = first[:5] + number + first[14:]
    birth, birth_check = _digits(second[0:6]), _digits(second[6])
    expiry, expiry_check = _digits(second[8:14]), _digits(second[14])
    optional_2, composite_check = second[18:29], _digits(second[29])
    _verify("birth_date", birth, birth_check, failed)
    _verify("expiry_date", expiry, expiry_check, failed)
    composite = first[5:30] + birth + birth_check + expiry + expiry_check + optional_2
    _verify("composite", composite, composite_check, failed)
    return _result("mrz_td1", first[0:2], birth, expiry, failed, today)


def _result(kind: str, code: str, birth: str, expiry: str, failed: list[str], today: datetime.date) -> Mrz:
    birthdate = _date(birth, today, birth=True)
    expiry_date = _date(expiry, today, birth=False)
    if birthdate is None:
        failed.append("birth_date_not_a_date")
    if expiry_date is None:
        failed.append("expiry_date_not_a_date")
    return Mrz(kind, code.replace("<", ""), birthdate, expiry_date, tuple(dict.fromkeys(failed)))


def _verify(name: str, field: str, digit: str, failed: list[str]) -> None:
    if not _verifies(field, digit):
        failed.append(name)


def _document_number(number: str, digit: str, failed: list[str]) -> str:
    """The document number as printed, or with O/0 and I/1 confusions undone if exactly that
    makes its check digit verify (document numbers mix letters and digits)."""
    digit = _digits(digit)
    ambiguous = [i for i, c in enumerate(number) if c in "O0I1"]
    if _verifies(number, digit) or len(ambiguous) > 6:
        if not _verifies(number, digit):
            failed.append("document_number")
        return number
    swap = {"O": "0", "0": "O", "I": "1", "1": "I"}
    for mask in range(1, 1 << len(ambiguous)):
        characters = list(number)
        for bit, index in enumerate(ambiguous):
            if mask >> bit & 1:
                characters[index] = swap[characters[index]]
        candidate = "".join(characters)
        if _verifies(candidate, digit):
            return candidate
    failed.append("document_number")
    return number


def _verifies(field: str, digit: str) -> bool:
    try:
        return digit.isdigit() and check_digit(field) == int(digit)
    except ValueError:
        return False


def _digits(field: str) -> str:
    return field.translate(_AS_DIGIT)


def _date(yymmdd: str, today: datetime.date, *, birth: bool) -> datetime.date | None:
    if not yymmdd.isdigit():
        return None
    yy, mm, dd = int(yymmdd[0:2]), int(yymmdd[2:4]), int(yymmdd[4:6])
    if birth:
        year = 2000 + yy if 2000 + yy <= today.year else 1900 + yy
    else:
        year = 2000 + yy if 2000 + yy <= today.year + 20 else 1900 + yy
    try:
        value = datetime.date(year, mm, dd)
    except ValueError:
        return None
    if birth and value > today:
        try:
            value = datetime.date(year - 100, mm, dd)
        except ValueError:  # Feb 29 of a century year that was not a leap year
            return None
    return value
