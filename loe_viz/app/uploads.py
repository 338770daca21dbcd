"""Reading an uploaded file in an app state: a refusal becomes the state's error, never an exception.

The readers' messages are written for the library's users ("pass
encoding='utf-16'", "raise it with read_triplets(..., limits=...)"): a visitor of
the page can follow none of that, so :func:`in_app_terms` turns the advice into
the page's own controls, or drops it where the page offers nothing.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .text import display_name

__all__ = ["ReadsUploads", "SKIP_BAD_ROWS", "in_app_terms", "rejection", "upload_name"]

#: Label of the "Your triplets" checkbox that reads a file with ``errors="skip"``.
SKIP_BAD_ROWS = "Skip rows with problems"

# (pattern, replacement) applied in order; advice the page cannot offer is removed with its clause
_APP_TERMS = [
    # the reader's size limits are the server's: a visitor cannot raise them
    (r"\s*\(raise it with read_triplets\(.*?\) or loe_viz\.io\.MAX_\w+\)", ""),
    (r"; errors='skip' drops the rows with problems", f"; tick “{SKIP_BAD_ROWS}” and upload it again to read it without them"),
    (r"\bpass encoding='?[\w-]*'? or (save it as UTF-8)", r"\1"),
    (r"; pass encoding= with the file's encoding", "; save it as UTF-8"),
    (r"\s*header=False, but ", " "),
    (r",? or pass (?:columns|layout)=(?: with header=True)?", ""),
    # any other keyword advice ("; pass item_type='str' to read numbers as labels too"): up to the clause's end
    (r"[;,]?\s*(?:or )?(?:drop |pass )\w+=[^;)]*", ""),
]


def in_app_terms(message: str) -> str:
    """A reader's message with its advice in the page's terms (advice the page cannot follow is dropped).

    Examples
    --------
    >>> in_app_terms("x.csv: is UTF-16 text; pass encoding='utf-16' or save it as UTF-8")
    'x.csv: is UTF-16 text; save it as UTF-8'
    """
    for pattern, repl in _APP_TERMS:
        message = re.sub(pattern, repl, message)
    return message


def upload_name(filename, default: str) -> str:
    """The name of an uploaded file as given (no path cut at ``/``), safe to show and to write in a comment line."""
    return display_name(filename, default)


def rejection(exc: BaseException, filename: str) -> str:
    """The error text of an upload the reader refused with ``exc``."""
    if isinstance(exc, ValueError):
        return f"Upload rejected: {in_app_terms(str(exc))}"
    return f"Upload rejected: {filename} could not be read ({type(exc).__name__}: {exc})"


class ReadsUploads:
    """For states with an ``error`` parameter that read uploaded files."""

    error: str

    @staticmethod
    def _try_read(read: Callable[[], Any], filename: str) -> tuple[Any, str]:
        """``(read(), "")``, or ``(None, why)`` when the upload was rejected; never raises.

        A ``ValueError`` carries the reader's own message (file, line and
        problem, its advice in the page's terms); any other exception is
        reported with its type. Runs on any thread (it touches no state).
        """
        try:
            return read(), ""
        except Exception as exc:  # never raise out of the state
            return None, rejection(exc, filename)

    def _read_upload(self, read: Callable[[], Any], filename: str) -> Any:
        """``read()``, or None with :attr:`error` saying why the upload was rejected."""
        value, why = self._try_read(read, filename)
        if why:
            self.error = why
        return value
