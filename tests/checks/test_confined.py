"""checks.confined: work run in a child that a CPU or a memory limit stops, not the caller's time limit."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from checks import confined
from checks.confined import OverBudget, run_confined
from checks.images import ImageRejected, open_image

WORK = "tests.support.confined_work"


def test_the_result_of_the_work_comes_back():
    assert run_confined(f"{WORK}:echo", b"0123456789") == b"0123456789" * 1000


def test_work_that_spins_is_stopped_by_its_cpu_limit_and_the_next_call_is_served():
    with pytest.raises(OverBudget):
        run_confined(f"{WORK}:spin", b"")

    assert run_confined(f"{WORK}:echo", b"x") == b"x" * 1000


def test_work_that_allocates_past_its_memory_limit_is_stopped():
    with pytest.raises(OverBudget):
        run_confined(f"{WORK}:allocate", str(confined.MEMORY_BYTES + (16 << 20)).encode())

    assert run_confined(f"{WORK}:allocate", str(64 << 20).encode()) == bytes(64 << 20)


def test_what_the_work_raises_is_raised_again_in_the_caller():
    with pytest.raises(ImageRejected, match="refused in the child"):
        run_confined(f"{WORK}:refuse", b"refused in the child")


def test_a_picture_whose_decode_outgrows_the_memory_limit_is_refused_as_too_complex(monkeypatch):
    buffer = io.BytesIO()
    Image.new("RGB", (2000, 1500), (10, 20, 30)).save(buffer, "PNG")  # a few kilobytes
    monkeypatch.setattr(confined, "MEMORY_BYTES", 8 * 1024 * 1024)  # less than its 12 MB of pixels

    with pytest.raises(ImageRejected, match="too complex to check"):
        open_image(buffer.getvalue())
    monkeypatch.undo()
    # Found over budget, the same bytes are refused at once the next time a check asks for them.
    with pytest.raises(ImageRejected, match="too complex to check"):
        open_image(buffer.getvalue())
