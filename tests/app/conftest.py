"""Helpers for the explorer tests: a real ``panel serve`` subprocess on a free port."""

from __future__ import annotations

import base64
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "apps" / "explorer.py"
TITLE = "Landmark Ordinal Embedding"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_LAUNCH = (
    "import faulthandler, signal, sys; faulthandler.register(signal.SIGUSR1, all_threads=True); "
    "from panel.command import main; main(['panel', *sys.argv[1:]])"
)


class Server:
    """``panel serve apps/explorer.py`` in a subprocess, stopped by its pid."""

    def __init__(self, app: Path = APP, port: int | None = None, extra=(), env: dict | None = None):
        self.port = port or free_port()
        self.url = f"http://localhost:{self.port}/{app.stem}"
        # ``panel serve`` with faulthandler on SIGUSR1, so a failing test can show every thread's stack
        cmd = [sys.executable, "-c", _LAUNCH, "serve", str(app), "--port", str(self.port),
               "--address", "127.0.0.1", "--allow-websocket-origin", f"localhost:{self.port}",
               "--allow-websocket-origin", f"127.0.0.1:{self.port}", *extra]
        # the log lives while the server does; stop() keeps its text and removes the file
        fd, name = tempfile.mkstemp(prefix=f"loe_viz_serve_{self.port}_", suffix=".log")
        self.log_path, self._final = Path(name), None
        self._log = os.fdopen(fd, "w")
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True, env=self._environment(env))

    @staticmethod
    def _environment(env: dict | None) -> dict:
        """This process's environment with ``env`` applied (a value of None removes the variable)."""
        merged = {**os.environ, **(env or {})}
        return {k: v for k, v in merged.items() if v is not None}

    def wait_listening(self, timeout: float = 120.0) -> float:
        """Wait until the port accepts connections; return the seconds it took."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"panel serve exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return time.perf_counter() - self.started
            except OSError:
                time.sleep(0.2)
        raise TimeoutError(f"panel serve did not listen within {timeout} s:\n{self.log()}")

    def get(self, path: str = "", timeout: float = 120.0) -> tuple[int, str]:
        with urllib.request.urlopen(self.url + path, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")

    def log(self) -> str:
        """The server's whole log so far (after :meth:`stop`, as it was then)."""
        if self._final is not None:
            return self._final
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def thread_stacks(self, wait: float = 2.0) -> str:
        """Every thread's Python stack in the server right now (from its log), or ``""``."""
        if self.proc.poll() is not None or not hasattr(signal, "SIGUSR1"):
            return ""
        before = self.log_path.stat().st_size if self.log_path.exists() else 0
        os.kill(self.proc.pid, signal.SIGUSR1)
        time.sleep(wait)
        self.log()
        with open(self.log_path, "rb") as f:
            f.seek(before)
            return f.read().decode("utf-8", "replace")[-20000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)  # the group of this one process we started
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        if self._final is None:
            self._log.close()
            self._final = self.log_path.read_text(errors="replace")
            self.log_path.unlink(missing_ok=True)


def raw_websocket(port: int, path: str, origin: str | None) -> bytes:
    """The server's first reply to a websocket upgrade request for ``path``, sent with or without an Origin."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    if origin is not None:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return s.recv(4096)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test that used the ``server`` fixture reports the server's thread stacks and log."""
    outcome = yield
    report = outcome.get_result()
    srv = getattr(item, "funcargs", {}).get("server")
    if report.failed and call.when == "call" and isinstance(srv, Server):
        try:
            report.sections.append(("panel serve: thread stacks", srv.thread_stacks() or "(server not running)"))
        except Exception as exc:  # a diagnostic must not hide the failure
            report.sections.append(("panel serve: thread stacks", f"unavailable: {exc!r}"))


@pytest.fixture(autouse=True)
def _panel_config_unthrottled(monkeypatch):
    """Every test starts with Panel's ``config.throttled`` off, whatever a test before it in the same process
    did: the explorer's ``pn.extension(throttled=True)`` (on serving it in this process) makes a spinner drop a
    ``value`` that comes without ``value_throttled``, so a later test's ``{"value": ...}`` event did nothing."""
    import panel as pn

    monkeypatch.setattr(pn.config, "throttled", False)


@pytest.fixture(scope="module")
def server():
    """One explorer server for a module's tests; a traceback anywhere in its log fails the module's last test."""
    srv = Server()
    try:
        srv.wait_listening()
        yield srv
    finally:
        srv.stop()
    log = srv.log()
    if "Traceback" in log:
        at = log.index("Traceback")
        pytest.fail("the server logged a traceback while this module's tests ran:\n" + log[max(0, at - 2000):at + 4000])


@pytest.fixture
def server_factory():
    """The :class:`Server` class, for tests that start and stop their own server."""
    return Server


@pytest.fixture
def app_title():
    return TITLE
