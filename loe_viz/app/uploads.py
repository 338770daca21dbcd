"""Reading an uploaded file in an app state: a refusal becomes the state's error, never an exception.

:class:`ReadsUploads` reads a file at once, or on a thread of its own
(``loe-viz-upload``) so that a large file does not hold the server's event
loop, which serves every visitor: the state names the file in ``reading``
meanwhile, and a newer upload, another choice of data or a closed page
supersede the read (its result is dropped). Both upload boxes of the
explorer (the walk-through's points, "Your triplets") read this way, and the
box a file came from (its :func:`loe_viz.app.serving.upload_receipt`) is told what
became of it: a refused file, or one other data replaced before it was read,
leaves the box; removing a file that was taken undoes the upload where the
state says how (``_upload_undo``).

The readers' messages are written for the library's users ("pass
encoding='utf-16'", "raise it with read_triplets(..., limits=...)"): a visitor of
the page can follow none of that, so :func:`in_app_terms` turns the advice into
the page's own controls, or drops it where the page offers nothing.
"""

from __future__ import annotations

import codecs
import re
from functools import partial
from typing import Any, Callable

from .jobs import JobRunner
from .text import display_name

__all__ = ["ReadsUploads", "SKIP_BAD_ROWS", "in_app_terms", "read_point_table", "rejection", "upload_name"]

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


def _text_problem(raw: bytes, name: str) -> str | None:
    """What keeps ``raw`` from being a point table as text, with its line (and byte), or None.

    Worded as the triplet reader words the same problems (:mod:`loe_viz.io`), so both boxes say
    a file's problem alike.
    """
    from ..io.layouts import utf16_without_bom
    from .limits import MAX_COLUMNS

    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return f"{name}: is UTF-16 text; save it as UTF-8"
    if utf16_without_bom(raw) is not None:
        return f"{name}: is UTF-16 text (without a byte-order mark); save it as UTF-8"
    if b"\x00" in raw:
        line = raw[:raw.find(b"\x00")].count(b"\n") + 1
        return (f"{name}: is not a point table: binary content (a NUL byte on line {line}); supported: "
                "CSV/TSV/whitespace text, .npy")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        return f"{name}: line {line}: is not valid UTF-8 text (byte 0x{raw[exc.start]:02x}); save it as UTF-8"
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    # only a line of MAX_COLUMNS characters or more can hold more fields (a list of every line of a 10 MB file of
    # short rows took 1.8 s and 50 MB, on a refused upload)
    for match in re.finditer(f"[^\n]{{{MAX_COLUMNS},}}", text):
        line = match.group().strip()
        if line.startswith("#"):
            continue
        delim = "\t" if "\t" in line else "," if "," in line else ";" if ";" in line else None
        k = line.count(delim) + 1 if delim else len(line.split())
        if k > MAX_COLUMNS:
            no = text.count("\n", 0, match.start()) + 1
            return (f"{name}: line {no}: {k:,} fields on one line; a point table has one column per coordinate "
                    f"(at most {MAX_COLUMNS:,} here): is this a point table?")
    return None


def read_point_table(read: Callable[[Any, str], Any], content, name: str):
    """``read(content, name)``, a text file it refuses said with its line and byte where the text is at fault.

    The point reader says "not a text file (it is not UTF-8)" with no place, and a table of
    1,000,000 columns on one line "must have at least 3 points, got 1"; the triplet reader names
    the line, the byte or the fields. A refused file's text is looked at again (never a taken one).
    """
    try:
        return read(content, name)
    except ValueError as exc:
        if (not isinstance(content, (bytes, bytearray, str)) or name.lower().endswith(".npy")
                or "columns, one per coordinate" in str(exc)):  # the explorer's own limit is said already
            raise
        raw = content.encode() if isinstance(content, str) else bytes(content)
        problem = _text_problem(raw, name)
        if problem is None:
            raise
        raise ValueError(problem) from None


def rejection(exc: BaseException, filename: str) -> str:
    """The error text of an upload the reader refused with ``exc``."""
    if isinstance(exc, ValueError):
        return f"Upload rejected: {in_app_terms(str(exc))}"
    return f"Upload rejected: {filename} could not be read ({type(exc).__name__}: {exc})"


class ReadsUploads:
    """For states with ``error`` and ``reading`` parameters that read uploaded files.

    A state calls :meth:`_init_reads` in its ``__init__`` (after it set ``_closed``), reads a
    file with :meth:`_start_read`, drops a read in progress with :meth:`_forget_read` when other
    data are chosen, and calls :meth:`_close_reads` when it closes. Results go to the UI
    through the state's ``dispatch`` (see :class:`~loe_viz.app.jobs.RunsJobs`).
    """

    error: str
    reading: str
    _closed: bool
    dispatch: Callable[[Callable[[], None]], None]

    def _init_reads(self) -> None:
        # uploads are read on a thread of their own: a read never waits for a run, nor cancels one
        self._reads = JobRunner("loe-viz-upload", dispatch=self._dispatch_read)
        self._read_seq = 0  # the read whose result is still wanted
        self._read_box = None  # the upload box the wanted read's file came from (told what became of it)

    def _upload_undo(self) -> Callable[[], None] | None:
        """What removing the file just taken from its box does (called right after ``take``); None: nothing."""
        return None

    def _dispatch_read(self, fn) -> None:
        """The state's dispatcher, the new data applied unheld.

        (See :data:`loe_viz.app.session.UNHELD`: held, the update could lose its plot data on the way
        to the page when another visitor's page was being built at that moment.)
        """
        fn.unheld = True
        self.dispatch(fn)

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

    def _start_read(self, read: Callable[[], Any], name: str, take: Callable[[Any], bool],
                    background: bool = False, box=None) -> bool:
        """Read an upload with ``read()``, then hand what it returned to ``take`` (on the UI thread).

        Parameters
        ----------
        read : callable
            Reads and checks the file (any thread; it touches no state), raising for a file it refuses.
        name : str
            The file's name as shown (see :func:`upload_name`).
        take : callable
            ``take(value)`` applies the data to the state; returns whether they were taken.
        background : bool, default False
            Read on the ``loe-viz-upload`` thread: :attr:`reading` names the file meanwhile, and the
            data (or the error) arrive through ``dispatch``, unless a newer read, :meth:`_forget_read`
            or closing superseded it.
        box : optional
            The receipt of the upload box the file came from
            (:func:`loe_viz.app.serving.upload_receipt`): told ``refused()`` when the file is not
            used, ``taken(undo)`` when it is (removing it from the box then calls ``undo``).

        Returns
        -------
        bool
            What ``take`` returned (with ``background``: True when the read started); False with
            :attr:`error` set when the file was rejected. The state's data stay until ``take``.
        """
        if self._closed:
            return False
        self._read_seq += 1
        seq = self._read_seq
        if self._read_box is not None:
            self._read_box.refused()  # a read superseded: its file will not be used (unless a newer one is in its box)
        self._read_box = box
        if not background:
            got, why = self._try_read(read, name)
            return self._take_read(seq, take, got, why)
        self.param.update(reading=name, error="")
        self._reads.submit(partial(self._read_job, read, name, take, seq))
        return True

    def _read_job(self, read, name, take, seq, token) -> None:
        """On the reading thread: read, then hand the outcome to the UI thread."""
        if token.cancelled or seq != self._read_seq:
            return
        got, why = self._try_read(read, name)
        if token.cancelled or seq != self._read_seq:
            return  # superseded meanwhile: nobody waits for it
        self._reads.publish(partial(self._take_read, seq, take, got, why))

    def _take_read(self, seq, take, got, why) -> bool:
        """Apply a read (on the UI thread) unless a newer one, other data or closing superseded it."""
        if self._closed or seq != self._read_seq:
            return False
        box, self._read_box = self._read_box, None
        if self.reading:
            self.reading = ""
        if why:
            # no "Upload complete" beside the refusal; a file that replaced a taken one in its box leaves that in use
            kept = box is not None and box.refused()
            self.error = f"{why}; the previous upload stays" if kept else why
            return False
        taken = take(got)
        if box is not None:
            if taken:
                box.taken(self._upload_undo())
            else:
                box.refused()
        return taken

    def _forget_read(self) -> None:
        """Drop an upload still being read (its result will not be applied)."""
        self._read_seq += 1
        self._reads.cancel()
        box, self._read_box = self._read_box, None
        if box is not None:
            box.refused()  # its file will not be used
        if self.reading:
            self.reading = ""

    def _close_reads(self) -> None:
        """Drop a read in progress and publish nothing more (the page is closing)."""
        self._read_seq += 1
        self._read_box = None
        self._reads.close()
