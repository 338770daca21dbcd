"""Text from users, shown in the page as text: the one escaping step of the explorer.

Anything a visitor controls (a URL query value, a file name, a cell of an
uploaded file, an error message quoting them) reaches the page through
:func:`escape` (for HTML) or :func:`md` (for Markdown panes, which render raw
HTML too).  Both return text that the browser displays literally and never
interprets as markup or script.
"""

from __future__ import annotations

import html
import os
import re

__all__ = ["escape", "md", "plain", "isolate", "display_name", "file_stem", "md_name", "md_quoting", "REPLACEMENT",
           "MAX_NAME_CHARS"]

# Characters with a meaning in Markdown (besides "<", ">" and "&", which become
# HTML entities); a backslash in front makes each one literal.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$=:])")


def escape(s) -> str:
    """``str(s)`` with ``& < > " '`` replaced by HTML entities.

    Examples
    --------
    >>> escape('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    """
    return html.escape(str(s), quote=True)


def md(s) -> str:
    """``str(s)`` for a Markdown pane: shown literally, never as markup, a link or a formula.

    Markdown's own special characters get a backslash; ``& < > " '`` become
    HTML entities (which Markdown shows as the characters).

    Examples
    --------
    >>> md("<b>x</b> *y*")
    '&lt;b&gt;x&lt;/b&gt; \\\\*y\\\\*'
    """
    return escape(_MD_SPECIAL.sub(r"\\\1", str(s)))


# Characters that change how the text around them is laid out or read, rather than being shown:
# C0 and C1 controls (line breaks, tabs, escape sequences), the line and paragraph separators, and
# the bidirectional embeddings, overrides and isolates (U+202A-202E, U+2066-2069), which reverse
# the words after them (a file name "x\u202egnp.csv" shows as "xvsc.png").
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
#: What a control character of user text is shown as.
REPLACEMENT = "\ufffd"
#: Longest user-given name shown (a longer one keeps its start and its end).
MAX_NAME_CHARS = 120


def plain(s) -> str:
    """``str(s)`` on one line, laid out as written: controls become U+FFFD, bidi overrides are removed.

    For user text written into a file's comment line (a line break there would
    start a row of the file) or shown in a sentence of the page (an override
    character would reverse the rest of the sentence).

    Examples
    --------
    >>> plain("data\\n=1+2.csv")
    'data\\ufffd=1+2.csv'
    >>> plain("x\\u202egnp.csv")
    'xgnp.csv'
    """
    return _CONTROL.sub(REPLACEMENT, _BIDI.sub("", str(s)))


def isolate(s) -> str:
    """:func:`plain` text wrapped in a first-strong isolate (U+2068 ... U+2069).

    Inside a sentence, a name in a right-to-left script stays one unit and does
    not pull the neighbouring words or numbers into its direction.
    """
    return "\u2068" + plain(s) + "\u2069"


def display_name(name, default: str = "") -> str:
    """A user-given (file) name as given, made :func:`plain` and at most :data:`MAX_NAME_CHARS` long.

    Nothing is cut at a ``/``: a name is shown as it was given, never as a path.

    Examples
    --------
    >>> display_name("http://example.org/data.csv")
    'http://example.org/data.csv'
    """
    s = plain(name if name is not None else "").strip()
    if len(s) > MAX_NAME_CHARS:
        s = s[:MAX_NAME_CHARS - 31] + "…" + s[-30:]
    return s or default


def file_stem(name, default: str, limit: int | None = None) -> str:
    """A name as given (an uploaded file's, which may hold "/", ":" or characters a file name cannot), without its
    extension, as a stem for a download's file name: word characters, dots and dashes, at most ``limit``."""
    stem = re.sub(r"[^\w.-]+", "_", os.path.splitext(str(name or default))[0]).strip("._")[:limit]
    return stem or default


def md_name(s) -> str:
    """A user-given name for a Markdown pane: :func:`md` of :func:`isolate`."""
    return md(isolate(s))


def md_quoting(text, *names) -> str:
    """``text`` (a sentence that may quote user text) for a Markdown pane: :func:`plain`, with ``names`` isolated.

    Each of ``names`` (a file name, say; at least 3 characters) found in the
    sentence is wrapped as by :func:`isolate`, then everything is escaped by :func:`md`.
    """
    out = plain(text)
    for name in {plain(n) for n in names if n and len(plain(n)) >= 3}:
        out = out.replace(name, "\u2068" + name + "\u2069")
    return md(out)
