"""Every lesson opens from its URL, applies its preset, runs and shows its story and question."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

from test_browser import CHROMIUM, Page, browser, shots  # noqa: E402,F401  (fixtures and helpers)

from loe_viz.app.lessons import LESSONS, lesson, lesson_config  # noqa: E402

assert CHROMIUM


def _first_words(text: str, k: int = 5) -> str:
    plain = re.sub(r"<[^>]+>|[*`]", "", text)
    return " ".join(plain.split()[:k])


def test_every_lesson_opens_from_its_url(server, browser, shots):
    p = Page(browser, server.url, width=1280, height=800)
    try:
        for x in LESSONS:
            p.page.goto(f"{server.url}?lesson={x.key}", timeout=180_000)
            p.wait_text(".loe-lesson-narrative", re.escape(_first_words(x.narrative)), timeout=120)
            p.wait_text(".loe-lesson-question", re.escape(_first_words(x.question)), timeout=30)
            if x.sweep is not None:  # runs in the background, with its slope
                p.wait_text(".loe-sweep-message", r"Done", timeout=300)
                slopes = p.wait_text(".loe-sweep-slopes", r"fitted log-log slope", timeout=30)
                if x.key == "budget":
                    m = re.search(r"Procrustes error: fitted log-log slope\s*(-?[0-9.]+)", slopes)
                    assert m and -1.5 < float(m.group(1)) < -0.6, slopes
            elif x.sample is not None:  # opens "Your triplets" on the lesson's file
                p.page.locator(".loe-lesson-open button").first.click()
                p.wait_text(".loe-tr-sentence", r"Read 4,000 triplets over 44 items", timeout=60)
            else:  # the walk-through runs the preset, and the step opens
                cfg = lesson_config(x)
                p.page.locator(".loe-lesson-open button").first.click()
                p.wait_text(".loe-step", re.escape(x.look_at), timeout=30)
                p.wait_text(".loe-status", rf"Procrustes error.*n = {cfg['n']:,}", timeout=120)
                # the sidebar shows the preset whose results are on screen
                assert p.page.locator(".loe-seed input").first.input_value() == str(cfg["seed"])
                p.wait_text(".loe-lesson-banner", re.escape(_first_words(x.question)), timeout=30)
            time.sleep(0.5)
            p.shot(shots / f"lesson_{x.key}.png")
            # a lecture hall may have no internet: scripts, stylesheets and fonts come from the server
            assert not p.external, (f"lesson {x.key!r} requested from other hosts "
                                    f"(the page must work offline): {sorted(set(p.external))}")
        assert not p.errors, p.errors
        # a hundred students load the page at once: no message of megabytes per page load
        big = [n for n in p.ws_received if n > 2_000_000]
        assert not big, f"websocket messages over 2 MB: {big}"
    finally:
        p.close()


def test_the_first_lesson_opens_with_one_click_and_only_the_open_one_is_marked(server, browser, shots):
    """The picker shows no lesson as chosen before one is, so a click on the first one opens it."""
    p = Page(browser, server.url, width=1280, height=800)
    try:
        p.page.locator(".bk-tab", has_text="Lessons").first.click()
        picks = p.page.locator(".loe-lesson-pick button")
        picks.first.wait_for(timeout=30_000)
        assert picks.count() == len(LESSONS)
        colours = [picks.nth(i).evaluate("el => getComputedStyle(el).backgroundColor") for i in range(picks.count())]
        assert len(set(colours)) == 1, colours  # nothing marked before a choice
        picks.first.click()
        x = LESSONS[0]
        p.wait_text(".loe-lesson-narrative", re.escape(_first_words(x.narrative)), timeout=60)
        time.sleep(0.5)
        colours = [picks.nth(i).evaluate("el => getComputedStyle(el).backgroundColor") for i in range(picks.count())]
        assert colours[0] != colours[1] and len(set(colours[1:])) == 1, colours  # only the open one is marked
        # that first click came with the button's whole definition, which Bokeh logged as a warning
        assert "reference already known" not in server.log()
        p.shot(shots / "lessons_first_clicked.png")
        # a lesson opened by a click reconfigures the walk-through, whose panes (hidden in their
        # tab) update while the lesson is drawn: every stylesheet still comes from the server
        x = next(x for x in LESSONS if x.sweep is None and x.sample is None and x is not LESSONS[0])
        picks.nth(LESSONS.index(x)).click()
        p.wait_text(".loe-lesson-narrative", re.escape(_first_words(x.narrative)), timeout=60)
        p.page.locator(".loe-lesson-open button").first.click()  # its result, in the walk-through
        p.wait_text(".loe-status", rf"Procrustes error.*n = {lesson_config(x)['n']:,}", timeout=120)
        # the step's plots as a file: built aside, it leaves the page's stylesheets as they were
        with p.page.expect_download(timeout=60_000) as dl:
            p.page.get_by_text("This step's plots (HTML)").first.click()
        assert "<html" in Path(dl.value.path()).read_text()[:2000].lower()
        p.page.locator(".bk-tab", has_text="Lessons").first.click()
        p.wait_text(".loe-lesson-narrative", re.escape(_first_words(x.narrative)), timeout=60)
        time.sleep(1.0)
        assert not p.external, ("a lesson opened by a click requested from other hosts (the page must "
                                f"work offline): {sorted(set(p.external))}")
        assert not p.failed, p.failed
        assert not p.errors, p.errors
    finally:
        p.close()


def _marked(p) -> list[str]:
    """The labels of the lesson's variant buttons drawn filled (the variant applied)."""
    vs = p.page.locator(".loe-lesson-variant button")
    return [vs.nth(i).inner_text() for i in range(vs.count())
            if vs.nth(i).evaluate("el => getComputedStyle(el).backgroundColor") not in ("rgba(0, 0, 0, 0)",
                                                                                     "transparent")]


def test_the_address_names_the_open_lesson_so_a_copied_link_opens_what_the_teacher_sees(server, browser):
    """The address never named a lesson opened by a click (a copied link opened the walk-through), kept the lesson the
    page was opened with after another was clicked (the wrong lesson, with the other's settings), and only a lesson
    opened from the address put its question above the walk-through."""
    noise = lesson("noise")
    p = Page(browser, server.url, width=1280, height=800)
    try:
        p.page.locator(".bk-tab", has_text="Lessons").first.click()
        p.page.locator(".loe-lesson-pick button").nth(LESSONS.index(noise)).click()
        p.wait_address(r"[?&]lesson=noise(&|$)")
        p.page.locator(".loe-lesson-variant button", has_text="T = 2").first.click()
        shared = p.wait_address(r"[?&]lesson=noise&.*temperature=2")
        assert _until_marked(p, ["T = 2"])
        p.page.locator(".bk-tab", has_text="Walk-through").first.click()
        p.wait_text(".loe-lesson-banner", re.escape(_first_words(noise.question)), timeout=30)
    finally:
        p.close()
    q = Page(browser, shared, width=1280, height=800, wait_status=False)
    try:  # the same lesson, the same variant
        q.wait_text(".loe-lesson-narrative", re.escape(_first_words(noise.narrative)), timeout=120)
        assert _until_marked(q, ["T = 2"])
        # and a screen reader hears which: the open lesson and the variant applied are pressed (only their fill said)
        q.page.get_by_role("button", name="T = 2", pressed=True).wait_for(timeout=10_000)
        q.page.get_by_role("button", name=noise.title, pressed=True).wait_for(timeout=10_000)
        assert q.page.get_by_role("button", name="T = 1 (the paper)", pressed=False).count() == 1
        # another lesson clicked: the address names it, and the walk-through asks its question
        first = LESSONS[0]
        q.page.locator(".loe-lesson-pick button").first.click()
        q.wait_address(rf"[?&]lesson={first.key}(&|$)")
        q.page.locator(".bk-tab", has_text="Walk-through").first.click()
        q.wait_text(".loe-lesson-banner", re.escape(_first_words(first.question)), timeout=30)
        assert noise.question[:40] not in q.text(".loe-lesson-banner")
        assert not q.errors, q.errors
    finally:
        q.close()


def _until_marked(p, want, timeout: float = 30) -> bool:
    deadline = time.perf_counter() + timeout
    while _marked(p) != want:
        if time.perf_counter() > deadline:
            raise AssertionError(f"marked {_marked(p)}, not {want}")
        time.sleep(0.2)
    return True


# the computed colour, background (the first opaque one up the tree, across shadow roots) and size of
# a `code` element
_CODE_STYLE_JS = """c => { const st = getComputedStyle(c); let e = c, bg = 'rgba(0, 0, 0, 0)';
  while (e && /rgba\\(0, 0, 0, 0\\)|transparent/.test(bg)) {
    bg = getComputedStyle(e).backgroundColor; e = e.parentElement || (e.getRootNode() && e.getRootNode().host); }
  return [st.color, /rgba\\(0, 0, 0, 0\\)/.test(bg) ? 'rgb(255, 255, 255)' : bg, parseFloat(st.fontSize)]; }"""
_SIZE_JS = "el => parseFloat(getComputedStyle(el).fontSize)"


def _contrast(fg: str, bg: str) -> float:
    def lum(css):
        r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    a, b = sorted((lum(fg), lum(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def test_lessons_read_from_the_back_of_a_hall(server, browser, shots):
    """One heading size however a lesson opens, readable link names, the applied variant marked,
    and the sweep's progress text inside a 1280 px window."""
    p = Page(browser, f"{server.url}?lesson=noise", width=1280, height=800, wait_status=False)
    try:
        x = lesson("noise")
        p.wait_text(".loe-lesson-narrative", re.escape(_first_words(x.narrative)), timeout=120)
        time.sleep(0.5)
        from_url = p.page.locator(".loe-lesson h2").first.evaluate(_SIZE_JS)
        # the row of link names (each a `code`)
        fg, bg, size = p.page.locator("code", has_text=re.compile(r"^landmarks$")).first.evaluate(_CODE_STYLE_JS)
        assert _contrast(fg, bg) >= 4.5 and size >= 14, (fg, bg, size)  # was #82aaff on white, 12 px
        assert not p.has_text("names are in brackets")
        variants = p.page.locator(".loe-lesson-variant button")

        def fills():
            return [variants.nth(i).evaluate("el => getComputedStyle(el).backgroundColor")
                    for i in range(variants.count())]
        c = fills()  # its preset, T = 0.25, is the first variant: only it is filled
        assert c[0] != c[1] and c[1] == c[2], c
        variants.nth(2).click()
        deadline = time.perf_counter() + 30
        while fills()[2] != c[0] and time.perf_counter() < deadline:
            time.sleep(0.2)
        assert fills() == [c[1], c[1], c[0]], fills()
        p.shot(shots / "lesson_noise_variant_marked.png")
        # the same heading when a lesson is opened by a click (was 32 px, against 18 px from the link)
        y = lesson("cost")
        p.page.locator(".loe-lesson-pick button").nth(LESSONS.index(y)).click()
        p.wait_text(".loe-lesson-narrative", re.escape(_first_words(y.narrative)), timeout=60)
        time.sleep(0.5)
        assert p.page.locator(".loe-lesson h2").first.evaluate(_SIZE_JS) == from_url >= 24
        p.wait_text(".loe-sweep-message", r"Done", timeout=300)
        time.sleep(0.5)
        msg = p.page.locator(".loe-sweep-message").first
        msg.scroll_into_view_if_needed()
        right = msg.evaluate("h => h.getBoundingClientRect().right")
        assert right <= p.page.viewport_size["width"], right
        p.shot(shots / "lesson_cost_done.png")
        assert not p.errors, p.errors
    finally:
        p.close()
