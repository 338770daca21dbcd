"""The explorer's escaping of user-derived text (no server)."""

from __future__ import annotations

import html
import re

import pytest

from loe_viz.app.text import escape, md

PAYLOADS = [
    '<img src=x onerror="window.__pwned=1">',
    "<script>window.__pwned=1</script>",
    "[click](javascript:window.__pwned=1)",
    "**bold** _it_ `code` $x$ # heading | cell |",
    "&lt;img src=x onerror=alert(1)&gt;",
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_escape_round_trips_through_html(payload):
    out = escape(payload)
    assert "<" not in out and ">" not in out and '"' not in out
    assert html.unescape(out) == payload


@pytest.mark.parametrize("payload", PAYLOADS)
def test_markdown_shows_the_text_literally(payload):
    pn = pytest.importorskip("panel")
    rendered = pn.pane.Markdown(md(payload)).get_root().text  # what the browser receives (escaped HTML)
    page = html.unescape(rendered)  # the HTML the browser renders
    assert "<img" not in page and "<script" not in page and "<a " not in page and "<strong>" not in page
    # the visible text is the payload itself
    assert re.findall(r"<(\w+)", page) == ["p"], page
    visible = html.unescape(re.sub(r"<[^>]+>", "", page)).strip()
    assert visible == payload.strip()


def test_the_explorer_writes_no_emoji_a_plain_font_lacks():
    """A lecture machine may have no colour-emoji font: "⏳" and "💾" showed as empty boxes in
    Chromium with DejaVu only. Symbols the DejaVu fonts have (★ ⚠ ✓ ✗ ⌊ ⌋) are fine."""
    from pathlib import Path

    import loe_viz.app

    found = []
    for path in sorted(Path(loe_viz.app.__file__).parent.rglob("*.py")):
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.name}:{no}: {ch!r}" for ch in line
                      if ord(ch) >= 0x1F000 or 0x23E9 <= ord(ch) <= 0x23FA or 0x2B50 <= ord(ch) <= 0x2B55]
    assert not found, found
