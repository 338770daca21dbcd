"""The served explorer answers over HTTP (a real ``panel serve`` subprocess)."""

from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.slow  # each test starts panel serve


def test_panel_serve_explorer_page(server_factory, app_title):
    TITLE = app_title
    srv = server_factory()
    try:
        listen = srv.wait_listening()
        t0 = time.perf_counter()
        status, html = srv.get()
        first = time.perf_counter() - t0
        assert status == 200
        assert TITLE in html
        assert "<title>" in html
        t0 = time.perf_counter()
        status, html = srv.get()  # a second session of the same server
        second = time.perf_counter() - t0
        assert status == 200 and TITLE in html
        print(f"listening after {listen:.1f} s; first page {first:.1f} s; second page {second:.1f} s")
    finally:
        srv.stop()
    assert srv.proc.returncode is not None
    log = srv.log()
    assert "Traceback" not in log, log


def test_panel_serve_notebook(server_factory, app_title):
    """``panel serve apps/explorer.ipynb`` (Panel needs nbconvert for notebooks)."""
    import pytest
    pytest.importorskip("nbconvert", reason="panel serve of a notebook needs nbconvert")
    from pathlib import Path
    nb = Path(__file__).resolve().parents[2] / "apps" / "explorer.ipynb"
    srv = server_factory(app=nb)
    try:
        srv.wait_listening()
        status, html = srv.get()
        assert status == 200 and app_title in html
    finally:
        srv.stop()
    assert "Traceback" not in srv.log(), srv.log()
