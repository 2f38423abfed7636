"""Multipart uploads of the flow, kept in memory only (never a temporary file) and capped while they stream."""

import io

from django.core.files.uploadedfile import InMemoryUploadedFile
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.utils.translation import gettext_lazy as _

from sessions_api.submission import MAX_IMAGE_BYTES

MESSAGE_FILE_TOO_LARGE = _("A picture is larger than 10 MB. Take a new picture or choose a smaller one.")
MESSAGE_TOO_MANY_FILES = _("Too many pictures were sent. Please start again.")
MESSAGE_REQUEST_TOO_LARGE = _("The pictures are too large to send together. Use smaller pictures.")
# Room for the form fields and multipart boundaries around the files.
_ENVELOPE_BYTES = 256 * 1024


class MemoryOnlyUploadHandler(FileUploadHandler):
    """Holds each uploaded file in a BytesIO; a file over `max_file_bytes` is skipped and noted in `rejected`.

    Django's default handlers spill uploads over 2.5 MB to a temporary file; biometric images must
    not reach the disk (CONTRACT 3), so this handler replaces them for the flow's upload views.
    """

    def __init__(self, request=None, *, max_files: int, max_total_bytes: int, max_file_bytes: int = MAX_IMAGE_BYTES):
        super().__init__(request)
        self.max_files = max_files
        self.max_file_bytes = max_file_bytes
        self.max_total_bytes = max_total_bytes
        self.total_bytes = 0
        self.files_seen = 0
        self.rejected: str | None = None
        self._buffer: io.BytesIO | None = None

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.files_seen += 1
        if self.files_seen > self.max_files:
            self.rejected = MESSAGE_TOO_MANY_FILES
            raise SkipFile()
        self._buffer = io.BytesIO()

    def receive_data_chunk(self, raw_data, start):
        self.total_bytes += len(raw_data)
        file_too_large = self._buffer.tell() + len(raw_data) > self.max_file_bytes
        if file_too_large or self.total_bytes > self.max_total_bytes:
            self.rejected = MESSAGE_FILE_TOO_LARGE if file_too_large else MESSAGE_REQUEST_TOO_LARGE
            self._buffer = None
            raise SkipFile()
        self._buffer.write(raw_data)
        return None

    def file_complete(self, file_size):
        if self._buffer is None:
            return None
        self._buffer.seek(0)
        return InMemoryUploadedFile(
            file=self._buffer,
            field_name=self.field_name,
            name=self.file_name or "upload",
            content_type=self.content_type,
            size=file_size,
            charset=self.charset,
            content_type_extra=self.content_type_extra,
        )


def request_too_large(request, *, max_total_bytes: int) -> bool:
    """Checked before the body is read, so an oversized request is answered without reading it."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return True
    return length > max_total_bytes + _ENVELOPE_BYTES


def use_memory_uploads(request, *, max_files: int, max_total_bytes: int) -> MemoryOnlyUploadHandler:
    """Memory use per request is bounded by max_total_bytes, whatever the client announces."""
    handler = MemoryOnlyUploadHandler(request, max_files=max_files, max_total_bytes=max_total_bytes)
    request.upload_handlers = [handler]
    return handler


def upload_rejection(request, handler: MemoryOnlyUploadHandler) -> str | None:
    """Why the upload was cut short, if it was. Parses the body first: parsing is what sets it."""
    request.FILES  # noqa: B018 - the body is parsed lazily, on first access
    return handler.rejected


def read_files(request, field_name: str) -> list[bytes]:
    return [upload.read() for upload in request.FILES.getlist(field_name)]
