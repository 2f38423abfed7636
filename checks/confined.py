"""Work run in a lean child process held to a CPU and a memory limit: a picture over budget stops there.

checks.images decodes every picture this way (issue 45). The header's cost estimate (checks.image_cost)
refuses what it can see coming; what it cannot, the kernel stops. Each process that decodes (a worker
process, a test) starts one child on first use, `python -m checks.confined`, which imports only what a
decode needs and serves one call at a time over its pipes, in memory. Before each call it sets its soft
RLIMIT_CPU to the CPU time it has used plus CPU_SECONDS (rounded down), so that a call running past its share
gets SIGXCPU and dies, and its soft RLIMIT_AS to its size then plus MEMORY_BYTES, so that an allocation past
it fails (the child then answers "over budget" and ends); it dumps no core (the pixels would reach a disk).
A child that died is started again on the next call. The worker's own time limit is never what ends a
decode. A call costs a millisecond or two of hand-over (bench/decode_costs.py prints it), where forking the
worker for each picture cost 7 ms of CPU, and a worker holding the models has no fork to make.
"""

from __future__ import annotations

import importlib
import math
import os
import pickle
import resource
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

CPU_SECONDS = 2
MEMORY_BYTES = 256 * 1024 * 1024
# A child that has not answered after this many seconds of wall time (it waits on nothing, so only a
# machine far overloaded) is killed.
WALL_SECONDS = 60

_RESULT, _RAISED, _OVER_BUDGET = b"R", b"E", b"O"
_LENGTH = 8


class OverBudget(Exception):
    """The call used up its CPU time or its memory (or hung): its work costs more than it may."""


def run_confined(function: str, argument: bytes) -> bytes:
    """`function` ("module:name", a function of bytes returning bytes) called on `argument` in the confined
    child: its bytes, or what it raised (raised again here), or OverBudget."""
    with _lock:
        return _child().call(function, argument)


def child_usage() -> tuple[float, int, int] | None:
    """This process's child as the kernel counts it: (CPU seconds, resident bytes, peak resident bytes), or None
    when none runs (bench/decode_costs.py)."""
    child = _current
    if child is None or not child.usable():
        return None
    try:
        with open(f"/proc/{child.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{child.process.pid}/status") as status:
            sizes = {
                line.split(":")[0]: int(line.split()[1]) * 1024
                for line in status
                if line.startswith("VmHWM:") or line.startswith("VmRSS:")
            }
    except FileNotFoundError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks, sizes["VmRSS"], sizes["VmHWM"]


class _Child:
    def __init__(self) -> None:
        root = str(Path(__file__).resolve().parent.parent)
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {root!r}); import checks.confined as c; c.serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            env={**os.environ, "AV_CONFINED_CPU_SECONDS": str(CPU_SECONDS), "AV_CONFINED_MEMORY": str(MEMORY_BYTES)},
        )
        self.owner = os.getpid()
        self.limits = (CPU_SECONDS, MEMORY_BYTES)

    def usable(self) -> bool:
        return self.owner == os.getpid() and self.process.poll() is None and self.limits == (CPU_SECONDS, MEMORY_BYTES)

    def call(self, function: str, argument: bytes) -> bytes:
        request = pickle.dumps((function, argument), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            message = memoryview(len(request).to_bytes(_LENGTH, "big") + request)
            while message:
                message = message[os.write(self.process.stdin.fileno(), message) :]
            status, payload = self._answer()
        except BrokenPipeError:  # the child died before it read the whole call: it had run out of memory
            self.stop()
            raise OverBudget(f"{function} went over {MEMORY_BYTES >> 20} MB") from None
        except BaseException:  # a broken pipe, no answer in time, or the caller's own time limit: start afresh
            self.stop()
            raise
        if status == _RESULT:
            return payload
        if status == _RAISED:
            raise pickle.loads(payload)
        self.stop()
        raise OverBudget(f"{function} went over {CPU_SECONDS} s of CPU or {MEMORY_BYTES >> 20} MB")

    def _answer(self) -> tuple[bytes, bytes]:
        deadline = time.monotonic() + WALL_SECONDS
        head = self._read(1 + _LENGTH, deadline)
        if len(head) < 1 + _LENGTH:  # the child died: SIGXCPU, or killed
            return _OVER_BUDGET, b""
        return head[:1], self._read(int.from_bytes(head[1:], "big"), deadline)

    def _read(self, size: int, deadline: float) -> bytes:
        answers = self.process.stdout.fileno()
        chunks, missing = [], size
        while missing:
            if not select.select([answers], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise OverBudget(f"no answer within {WALL_SECONDS} s")
            chunk = os.read(answers, min(missing, 1 << 22))
            if not chunk:
                break
            chunks.append(chunk)
            missing -= len(chunk)
        return b"".join(chunks)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass


_lock = threading.Lock()
_current: _Child | None = None


def _child() -> _Child:
    global _current
    if _current is None or not _current.usable():
        if _current is not None and _current.owner == os.getpid():
            _current.stop()
        _current = _Child()
    return _current


def serve() -> None:
    """The child's loop: read a call, run it within the limits, answer; end when the parent closes the pipe."""
    cpu_seconds = int(os.environ["AV_CONFINED_CPU_SECONDS"])
    memory_bytes = int(os.environ["AV_CONFINED_MEMORY"])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the terminal is for the parent
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = requests.read(_LENGTH)
        if len(head) < _LENGTH:
            return
        try:
            function, argument = pickle.loads(requests.read(int.from_bytes(head, "big")))
            module, name = function.split(":")
            work = getattr(importlib.import_module(module), name)  # imported before the size is taken
            _limit(cpu_seconds, memory_bytes)
            status, payload = _run(work, argument)
        except MemoryError:
            status, payload = _OVER_BUDGET, b""
        answers.write(status + len(payload).to_bytes(_LENGTH, "big") + payload)
        answers.flush()
        if status == _OVER_BUDGET:
            return


def _limit(cpu_seconds: int, memory_bytes: int) -> None:
    """This call's share: the CPU time used so far plus cpu_seconds (the soft limit, in whole seconds: SIGXCPU),
    the address space mapped now plus memory_bytes. Only soft limits move, so the next call may raise them."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    limit = math.floor(usage.ru_utime + usage.ru_stime + cpu_seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (limit, resource.RLIM_INFINITY))
    with open("/proc/self/statm") as statm:
        size = int(statm.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (size + memory_bytes, resource.RLIM_INFINITY))


def _run(work: Callable[[bytes], bytes], argument: bytes) -> tuple[bytes, bytes]:
    try:
        return _RESULT, work(argument)
    except MemoryError:
        raise
    except Exception as error:  # the parent raises it again
        try:
            return _RAISED, pickle.dumps(error)
        except Exception:  # an exception that cannot be pickled: its text
            return _RAISED, pickle.dumps(RuntimeError(repr(error)))
