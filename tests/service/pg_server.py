"""A throwaway PostgreSQL server for the service tests, from the machine's binaries.

``initdb`` into a temporary folder, ``postgres`` listening on 127.0.0.1 on a free port (and a
socket in the data folder), fsync off since the data is thrown away. Run as the ``postgres``
user when the tests run as root (the server refuses root); stopped by its pid.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from itertools import count
from pathlib import Path

BIN = Path(os.environ.get("ASSAY_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))


def missing() -> str | None:
    """Why no server can be started here, or None."""
    for tool in ("initdb", "postgres"):
        if not (BIN / tool).is_file():
            return (f"PostgreSQL binaries not found in {BIN} (install Debian's postgresql package, or set "
                    "ASSAY_TEST_PG_BIN): the PostgreSQL variants of the service tests are skipped")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the server as: PostgreSQL tests skipped"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    """One server; ``new_database()`` gives each test its own empty database."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="assay-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user = "postgres" if os.geteuid() == 0 else None
        self.process: subprocess.Popen[bytes] | None = None
        self._names = count(1)

    def _run_as(self) -> dict:
        return {"user": self.user} if self.user else {}

    def start(self) -> PostgresServer:
        self.data.mkdir()
        if self.user:
            record = pwd.getpwnam(self.user)
            for path in (self.root, self.data):
                os.chown(path, record.pw_uid, record.pw_gid)
        subprocess.run([str(BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                        "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"],
                       check=True, capture_output=True, timeout=120, **self._run_as())
        return self.launch()

    def launch(self) -> PostgresServer:
        """Start ``postgres`` on the data folder and port, and wait until it takes connections."""
        log = open(self.root / "server.log", "ab")  # noqa: SIM115  closed with the process
        self.process = subprocess.Popen(
            [str(BIN / "postgres"), "-D", str(self.data), "-h", "127.0.0.1", "-p", str(self.port),
             "-k", str(self.data), "-c", "fsync=off", "-c", "synchronous_commit=off",
             "-c", "full_page_writes=off", "-c", "max_connections=200"],
            stdout=log, stderr=subprocess.STDOUT, **self._run_as())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited: {(self.root / 'server.log').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    pass
                if self._ready():
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("postgres did not start within 60 s")

    def restart(self, down_s: float) -> None:
        """What ``pg_ctl restart -m fast`` does, with the server away ``down_s`` seconds: every
        session is ended, the port closes, and the server comes back on the same port and data."""
        assert self.process is not None
        self.shut_down()
        time.sleep(down_s)
        self.launch()

    def shut_down(self) -> None:
        """Stop the server as ``pg_ctl stop -m fast`` does (``launch`` starts it again)."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGINT)  # "fast" shutdown
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def _ready(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url("postgres", driver=False), connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def url(self, database: str, *, driver: bool = True) -> str:
        scheme = "postgresql+psycopg" if driver else "postgresql"
        return f"{scheme}://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; returns its SQLAlchemy URL."""
        import psycopg

        name = f"assay_test_{next(self._names)}"
        with psycopg.connect(self.url("postgres", driver=False), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.shut_down()
        shutil.rmtree(self.root, ignore_errors=True)
