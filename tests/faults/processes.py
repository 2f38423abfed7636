"""Private services for fault tests: a redis-server, a PostgreSQL cluster and Celery workers that a test may kill.

The machine's shared PostgreSQL (5432) and Redis (6379) are never touched: every process here listens
on its own port in FAULT_PORTS and is stopped when its test ends.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings

from tests.support.parallel import DEFAULT_FAULT_PORTS, port_range

REPO = Path(__file__).resolve().parents[2]


# Movable where something else on the machine listens there (docs/testing.md).
FAULT_PORTS = port_range(os.environ.get("AV_TEST_FAULT_PORTS", DEFAULT_FAULT_PORTS))
PG_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), Path("/usr/bin"))


def free_port() -> int:
    for port in FAULT_PORTS:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port in the fault tests' range")


def _wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} not ready within {timeout} s")


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


class PrivateRedis:
    """A redis-server without persistence on its own port: killed, frozen (SIGSTOP) and started again at will."""

    def __init__(self):
        self.port = free_port()
        self.process = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_for(lambda: _accepts(self.port), 10, "redis-server")

    def kill(self):
        self.process.kill()
        self.process.wait()

    def freeze(self):
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self):
        self.process.send_signal(signal.SIGCONT)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.thaw()
            self.kill()


class PrivatePostgres:
    """A throwaway PostgreSQL cluster (initdb + pg_ctl as the postgres user) with trust authentication.

    Its database `av` is a copy of this test run's database (schema and rows), made with pg_dump,
    which is much faster than running the migrations again.
    """

    def __init__(self):
        self.port = free_port()
        # Not under pytest's tmp_path: the postgres user cannot enter root's private directories.
        self.home = Path(tempfile.mkdtemp(prefix="av-faults-pg-"))
        shutil.chown(self.home, "postgres")
        self.directory = self.home / "pgdata"
        self._as_postgres(
            [
                str(PG_BIN / "initdb"),
                "-D",
                str(self.directory),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
                "-E",
                "UTF8",
            ]
        )
        self.start()
        self._as_postgres([str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "av"])
        db = settings.DATABASES["default"]
        dump = subprocess.run(
            [
                str(PG_BIN / "pg_dump"),
                "--no-owner",
                "-h",
                db["HOST"],
                "-p",
                str(db["PORT"]),
                "-U",
                db["USER"],
                db["NAME"],
            ],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(
            [
                str(PG_BIN / "psql"),
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "av",
            ],
            input=dump,
            check=True,
            capture_output=True,
        )

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/av"

    def _as_postgres(self, command):
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *command],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def _pg_ctl(self, *args):
        self._as_postgres([str(PG_BIN / "pg_ctl"), "-D", str(self.directory), "-w", "-t", "30", *args])

    def start(self):
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.directory} -c fsync=off"
        )
        self._pg_ctl("-o", options, "-l", str(self.directory / "log"), "start")

    def restart(self):
        self._pg_ctl("-m", "fast", "stop")
        self.start()

    def stop(self):
        try:
            self._pg_ctl("-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.home, ignore_errors=True)


class CeleryWorker:
    """`celery -A ageverify worker` for one queue, in its own process, pointed at the given broker and database."""

    def __init__(
        self,
        *,
        queue: str,
        broker_url: str,
        database_url: str,
        log_dir: Path,
        extra_env: dict | None = None,
        concurrency: int = 1,
        pool: str | None = None,
        beat: bool = False,
    ):
        self.queue = queue
        self.log = log_dir / f"worker-{queue}-{time.monotonic_ns()}.log"
        self.env = {
            **os.environ,
            "REDIS_URL": broker_url,
            "DATABASE_URL": database_url,
            "WEBHOOK_ALLOW_PRIVATE_TARGETS": "1",
            **(extra_env or {}),
        }
        self.command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "ageverify",
            "worker",
            "-Q",
            queue,
            "-n",
            f"{queue}-{time.monotonic_ns()}@fault",
            "--concurrency",
            str(concurrency),
            "--loglevel",
            "INFO",
            "--without-gossip",
            "--without-mingle",
        ]
        if pool is not None:
            self.command += ["--pool", pool]
        if beat:
            self.command += ["--beat", "--schedule", str(log_dir / "beat-schedule")]
        self.process = None
        self.start()

    def start(self):
        offset = self.log.stat().st_size if self.log.exists() else 0
        self.handle = self.log.open("ab")
        self.process = subprocess.Popen(
            self.command, cwd=REPO, env=self.env, stdout=self.handle, stderr=subprocess.STDOUT, start_new_session=True
        )
        _wait_for(
            lambda: self.process.poll() is not None or b" ready." in self.log.read_bytes()[offset:],
            60,
            f"celery worker for {self.queue}",
        )
        assert self.alive, self.output()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def idle(self) -> bool:
        """Every task this worker received has ended (its INFO log says so for each): none is running now."""
        log = self.log.read_text(errors="replace")
        received = set(re.findall(r"Task \S+\[([0-9a-f-]+)\] received", log))
        ended = set(re.findall(r"Task \S+\[([0-9a-f-]+)\] (?!received)", log))
        return received <= ended

    def kill(self):
        """SIGKILL the whole worker (main process and pool children), as an OOM killer or a lost host does."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.handle.close()

    def stop(self):
        if self.process and self.alive:
            self.kill()  # nothing to finish gracefully at the end of a test
        self.handle.close()


class WebServer:
    """The web service as deployed (gunicorn, ageverify.wsgi) on a free port, with its own broker and database."""

    def __init__(self, *, redis_url: str, database_url: str, log_dir: Path, extra_env: dict | None = None):
        self.port = free_port()
        self.log = log_dir / f"gunicorn-{self.port}.log"
        env = {**os.environ, "REDIS_URL": redis_url, "DATABASE_URL": database_url, **(extra_env or {})}
        self.handle = self.log.open("ab")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "ageverify.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "1",
                "--threads",
                "4",
                "--timeout",
                "60",
            ],
            cwd=REPO,
            env=env,
            stdout=self.handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _wait_for(lambda: self.process.poll() is not None or _accepts(self.port), 30, "gunicorn")
        assert self.process.poll() is None, self.log.read_text()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.handle.close()
