"""The explorer's notebook layout (``Explorer.__panel__``) in a real browser.

Keys typed in the explorer's boxes stay there when a notebook listens for shortcuts: JupyterLab listens for its shortcuts on the document, after the event has bubbled up, and
takes Enter (calling ``preventDefault``, which keeps the box from applying the number). Panel
draws widgets in shadow roots, so the notebook cannot tell that the key was pressed in a text
box. The page below is the explorer's notebook layout with such a listener on the document.

And in an output narrower than the explorer (beside JupyterLab's file browser), every plot stays
inside the explorer's box, which the output scrolls sideways: nothing is cut off.
"""

from __future__ import annotations

import re
import time

import pytest

from test_browser import Page, browser  # noqa: F401  (the module-scoped browser fixture)

pytestmark = pytest.mark.browser

APP = """
import panel as pn
from loe_viz.app import Explorer
pn.extension("katex", "filedropper")
pn.panel(Explorer(n=200)).servable(title="notebook layout")
"""

# What JupyterLab's shortcut handler does with a key (its listener is on the document, bubbling).
NOTEBOOK_SHORTCUTS = """
window.__notebook_saw = [];
document.addEventListener("keydown", e => {
  window.__notebook_saw.push((e.ctrlKey ? "Ctrl+" : "") + e.key);
  if (e.key === "Enter") e.preventDefault();
});
"""


@pytest.fixture(scope="module")
def notebook_layout(tmp_path_factory):
    from conftest import Server

    app = tmp_path_factory.mktemp("notebook_layout") / "notebook_layout.py"
    app.write_text(APP)
    srv = Server(app=app)
    try:
        srv.wait_listening()
        yield srv
    finally:
        srv.stop()


def test_enter_in_a_number_box_applies_it_and_is_not_a_notebook_shortcut(notebook_layout, browser):  # noqa: F811
    p = Page(browser, notebook_layout.url, width=1280, height=800, wait_status=False)
    try:
        p.context.add_init_script(NOTEBOOK_SHORTCUTS)
        p.page.reload()
        status = p.wait_text(".loe-status", r"Procrustes error [0-9.]+", timeout=120)
        seed = p.page.locator(".bk-input-group:has(label:text-is('Seed')) input").first
        seed.click()
        seed.fill("")
        seed.press_sequentially("7")  # key by key, as typed
        seed.press("Enter")
        # the number is applied on Enter (the focus stays in the box: no blur applies it instead)
        after = p.wait_text(".loe-status", r"Procrustes error [0-9.]+", timeout=1)
        deadline = time.perf_counter() + 60
        while after == status and time.perf_counter() < deadline:
            time.sleep(0.25)
            after = p.text(".loe-status")
        assert after != status, "Enter in the seed box did not start a run with the new seed"
        assert seed.evaluate("e => e.getRootNode().activeElement === e")
        saw = p.page.evaluate("window.__notebook_saw")
        assert "Enter" not in saw and "7" not in saw, saw
        # shortcuts with Ctrl still reach the notebook (Ctrl+B hides JupyterLab's file browser)
        seed.press("Control+b")
        # and keys outside the boxes are the notebook's
        p.page.locator("body").click(position={"x": 2, "y": 2})
        p.page.keyboard.press("a")
        saw = p.page.evaluate("window.__notebook_saw")
        assert saw[-2:] == ["Ctrl+b", "a"], saw
        assert not p.errors, p.errors
        assert re.search(r"Procrustes error [0-9.]+", after)
    finally:
        p.context.close()


_RIGHT_EDGES_JS = """() => {
  const row = document.querySelector('.bk-Row');
  const edges = [];
  const walk = el => {
    if (el.classList && el.classList.contains('bk-Canvas')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0) edges.push(r.right);
    }
    for (const k of (el.shadowRoot ? [...el.shadowRoot.children] : []).concat([...el.children])) walk(k);
  };
  walk(row);
  return [row.getBoundingClientRect().right, Math.max(...edges), edges.length];
}"""


def test_a_narrow_output_scrolls_sideways_instead_of_cutting_plots_off(notebook_layout, browser):  # noqa: F811
    # 848 px: a notebook's output beside JupyterLab's file browser on a 1280 px screen
    from loe_viz.app.explorer import NOTEBOOK_MIN_WIDTH

    p = Page(browser, notebook_layout.url, width=848, height=800, wait_status=False)
    try:
        p.wait_text(".loe-status", r"Procrustes error [0-9.]+", timeout=120)
        for step in ("Ranking", "EDM", "Embedding"):
            p.page.locator(".bk-tab", has_text=re.compile(f"^{step}$")).first.click()
            deadline, edges = time.perf_counter() + 60, (0, 0, 0)
            while time.perf_counter() < deadline:
                edges = p.page.evaluate(_RIGHT_EDGES_JS)
                if edges[2] >= 2:
                    break
                time.sleep(0.25)
            row_right, plots_right, n_plots = edges
            assert n_plots >= 2, (step, edges)
            assert row_right >= NOTEBOOK_MIN_WIDTH and plots_right <= row_right + 1, (step, edges)
        assert p.page.evaluate("document.documentElement.scrollWidth") >= NOTEBOOK_MIN_WIDTH
        assert not p.errors, p.errors
    finally:
        p.context.close()


def test_your_triplets_takes_the_sidebars_width_in_a_notebook(notebook_layout, browser):  # noqa: F811
    # the sidebar holds the walk-through's settings only: in "Your triplets" its 330 px column was left empty
    p = Page(browser, notebook_layout.url, width=1280, height=800, wait_status=False)
    modes = p.page.locator(".loe-modes").first
    try:
        p.wait_text(".loe-status", r"Procrustes error [0-9.]+", timeout=120)
        beside = round(modes.bounding_box()["x"])
        assert beside >= 330, beside
        p.page.locator(".bk-tab", has_text="Your triplets").first.click()
        p.wait_text(".loe-tr-sentence", r"Read [0-9,]+ triplets", timeout=60)
        assert round(modes.bounding_box()["x"]) < 40 and not p.page.locator(".loe-n").first.is_visible()
        p.page.locator(".bk-tab", has_text="Walk-through").first.click()
        p.page.locator(".loe-n").first.wait_for(state="visible", timeout=30_000)
        assert round(modes.bounding_box()["x"]) == beside
        assert not p.errors, p.errors
    finally:
        p.context.close()
