"""Text from users, shown in the page as text: the one escaping step of the explorer.

Anything a visitor controls (a URL query value, a file name, a cell of an
uploaded file, an error message quoting them) reaches the page through
:func:`escape` (for HTML) or :func:`md` (for Markdown panes, which render raw
HTML too).  Both return text that the browser displays literally and never
interprets as markup or script.
"""

from __future__ import annotations

import html
import re

__all__ = ["escape", "md"]

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
