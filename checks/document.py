"""Identity document reading: PDF417 (AAMVA) with zxing-cpp, ICAO 9303 MRZ through passporteye.

Order: a straight PDF417 read first (a few milliseconds), then the MRZ (OCR, about a second),
then PDF417 again at small counter-rotations, since zxing-cpp loses a PDF417 beyond about 3
degrees of skew. The first reading whose checks pass is returned; failing that, the best reading
whose checks fail (the caller denies it as an invalid document); nothing readable: a retake.

Pictures stay in memory. Tesseract (run by passporteye through pytesseract) needs files: it writes
its input and output to the temporary directory and deletes them in a ``finally``.
"""

from __future__ import annotations

import datetime
import logging
import warnings
from collections.abc import Iterator

import numpy as np
from PIL import Image

from checks.aamva import AamvaFormatError, parse_aamva
from checks.images import ImageRejected, open_image
from checks.mrz import Mrz, MrzFormatError, parse_mrz
from checks.results import DocumentData, Retake, gettext_noop

logger = logging.getLogger(__name__)

# passporteye 2.2.2 calls skimage.morphology.square, deprecated in scikit-image 0.25 (so
# scikit-image stays below 0.27, where it is removed).
warnings.filterwarnings("ignore", category=FutureWarning, module="passporteye")

MESSAGE_UNREADABLE = gettext_noop(
    "We could not read the document. Photograph the side with the barcode or the machine-readable "
    "lines (the rows of letters and <<< at the bottom), flat, in good light, filling the frame."
)

COUNTER_ROTATIONS = (2, -2, 4, -4, 6, -6, 8, -8)  # degrees
_BARCODE_MAX_SIDE = 2000
_MRZ_MAX_SIDE = 2000
_MRZ_MAX_BOXES = 3
_MRZ_LINE_HEIGHTS = (None, 100, 60)  # as found, then lines ~100 and ~60 px tall


def read_document(image: bytes, *, today: datetime.date | None = None) -> DocumentData | Retake:
    """Read the birth and expiry dates from a document photo and verify its machine-readable data."""
    try:
        picture = open_image(image)
    except ImageRejected as rejected:
        return Retake(rejected.message)
    # Scaled once here, not by each reading below (a 12-megapixel picture took 0.3 s each): then theirs is a no-op.
    picture = _scaled(picture, max(_BARCODE_MAX_SIDE, _MRZ_MAX_SIDE))
    today = today or datetime.datetime.now(datetime.UTC).date()
    readings: list[DocumentData] = []
    for attempt in (
        lambda: _read_pdf417(picture, rotations=(0,)),
        lambda: _read_mrz(picture, today),
        lambda: _read_pdf417(picture, rotations=COUNTER_ROTATIONS),
    ):
        reading = attempt()
        if reading is None:
            continue
        if reading.checks_valid:
            return reading
        readings.append(reading)
    if readings:
        return readings[0]
    return Retake(MESSAGE_UNREADABLE)


def read_document_sides(images: list[bytes], *, today: datetime.date | None = None) -> DocumentData | Retake:
    """Read the machine-readable data from the pictures of one document (the front or data page first, then
    the back if given): the back is read first, where ID cards and licences carry their MRZ or barcode;
    the first reading whose checks pass wins, else the first reading, else the first retake."""
    readings: list[DocumentData | Retake] = []
    for image in reversed(images):
        reading = read_document(image, today=today)
        if isinstance(reading, DocumentData) and reading.checks_valid:
            return reading
        readings.append(reading)
    documents = [reading for reading in readings if isinstance(reading, DocumentData)]
    return documents[0] if documents else readings[0]


def age_on(birthdate: datetime.date, day: datetime.date) -> int:
    """Age in full years on day. The birthday counts on the day itself; someone born on 29
    February turns a year older on 1 March in years without a 29 February."""
    years = day.year - birthdate.year
    if (day.month, day.day) < (birthdate.month, birthdate.day):
        years -= 1
    return years


def _read_pdf417(picture: Image.Image, *, rotations: tuple[int, ...]) -> DocumentData | None:
    import zxingcpp

    grey = _scaled(picture, _BARCODE_MAX_SIDE).convert("L")
    for angle in rotations:
        view = (
            grey if angle == 0 else grey.rotate(angle, resample=Image.Resampling.BILINEAR, expand=True, fillcolor=255)
        )
        barcodes = zxingcpp.read_barcodes(np.ascontiguousarray(np.asarray(view)), formats=zxingcpp.BarcodeFormat.PDF417)
        for barcode in barcodes:
            reading = _aamva_reading(barcode.bytes)
            if reading is not None:
                return reading
    return None


def _aamva_reading(payload: bytes) -> DocumentData | None:
    try:
        record = parse_aamva(payload)
    except AamvaFormatError:
        return None  # a PDF417, but not a driving licence's
    if record.birthdate is None:
        return None
    return DocumentData(
        kind="aamva",
        birthdate=record.birthdate,
        expiry_date=record.expiry_date,
        checks_valid=record.checks_valid,
        problem="; ".join(record.problems) or None,
    )


def _read_mrz(picture: Image.Image, today: datetime.date) -> DocumentData | None:
    best: Mrz | None = None
    for text in _mrz_texts(picture):
        try:
            mrz = parse_mrz(text, today=today)
        except MrzFormatError:
            continue
        if mrz.birthdate is None:
            continue
        if mrz.checks_valid:
            best = mrz
            break
        if best is None or len(mrz.failed_checks) < len(best.failed_checks):
            best = mrz
    if best is None or best.birthdate is None:
        return None
    return DocumentData(
        kind=best.kind,
        birthdate=best.birthdate,
        expiry_date=best.expiry_date,
        checks_valid=best.checks_valid,
        problem=None if best.checks_valid else "check digit mismatch: " + ", ".join(best.failed_checks),
    )


def _mrz_texts(picture: Image.Image) -> Iterator[str]:
    """OCR text of each MRZ-like region passporteye locates, at a few text sizes (Tesseract
    misreads filler runs differently at each); lazily, so reading stops at the first valid one."""
    from passporteye.mrz.image import MRZPipeline
    from passporteye.util.ocr import ocr
    from pytesseract import TesseractError

    grey = np.asarray(_scaled(picture, _MRZ_MAX_SIDE).convert("L"), dtype=np.float64) / 255.0
    pipeline = MRZPipeline(None)
    pipeline["img"] = grey  # bypass its file loader: the picture never leaves memory here
    try:
        boxes = pipeline["boxes"][:_MRZ_MAX_BOXES]
        scale_factor = pipeline["scale_factor"]
    except Exception:  # noqa: BLE001 - passporteye raises bare exceptions on odd inputs
        logger.debug("passporteye found no MRZ region", exc_info=True)
        return
    for box in boxes:
        roi = box.extract_from_image(grey, 1.0 / scale_factor)
        if roi.size == 0 or min(roi.shape) < 8:
            continue
        for line_height in _MRZ_LINE_HEIGHTS:
            try:
                text = ocr(_line_scaled(roi, line_height))
                if text.count(">") > text.count("<"):
                    # The picture is upside down: chevrons read as '>'.
                    roi = roi[::-1, ::-1]
                    text = ocr(_line_scaled(roi, line_height))
            except TesseractError:
                # A crash on one odd region; a missing tesseract binary is not caught.
                logger.warning("tesseract failed on an MRZ region", exc_info=True)
                continue
            yield text


def _line_scaled(roi: np.ndarray, line_height: int | None) -> np.ndarray:
    """The region rescaled so each of its text lines is about line_height pixels tall."""
    if line_height is None:
        return roi
    lines = 3 if roi.shape[1] / roi.shape[0] < 7 else 2  # TD1 blocks are squarer than TD3's
    factor = line_height * lines / roi.shape[0]
    height, width = round(roi.shape[0] * factor), round(roi.shape[1] * factor)
    image = Image.fromarray(np.clip(roi * 255, 0, 255).astype(np.uint8))
    return np.asarray(image.resize((width, height), Image.Resampling.LANCZOS), dtype=np.float64) / 255.0


def _scaled(picture: Image.Image, max_side: int) -> Image.Image:
    longest = max(picture.size)
    if longest <= max_side:
        return picture
    scale = max_side / longest
    return picture.resize((round(picture.width * scale), round(picture.height * scale)), Image.Resampling.LANCZOS)
