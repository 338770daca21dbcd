"""The ``loe-viz`` command: serve the explorer, embed a triplet file, simulate triplets, describe a file, copy a
bundled sample.

::

    loe-viz explore [--port N] [--address A] [--warm] [--show]
    loe-viz embed FILE [--method loe|ste|tste|soe|gnmds|ckl|loeste] [-d 2] [--landmarks N|auto]
                       [--heldout 0.2] [--seed S] [-o OUT] [--force] [reading options]
    loe-viz simulate KIND -n N [-d 2] [--temperature T] [--budget c] [-o triplets.csv] [--force]
    loe-viz info FILE [reading options: --layout --item-type --header --columns --encoding --skip-bad-rows --limit]
    loe-viz samples [NAME [-o OUT] [--force]]

``loe-viz SUBCOMMAND --help`` describes each. A usage error prints one line on
standard error and exits with status 2; a file or setting that cannot be used
(a malformed triplet file, a method that cannot run on it) prints one line and
exits with status 1; the settings and the output path are checked before any file is read.
Messages name this command's options, not the library's arguments. Also runnable as
``python -m loe_viz``.

Panel is imported by ``explore`` only; the other sub-commands need the library alone.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import re
import signal
import sys
import threading
import time
import warnings

__all__ = ["main", "build_parser", "METHOD_CLASSES"]

PROG = "loe-viz"

#: ``--method`` name -> estimator class name in :mod:`loe_viz`.
METHOD_CLASSES = {"loe": "LOE", "ste": "STE", "tste": "TSTE", "soe": "SOE", "gnmds": "GNMDS", "ckl": "CKL",
                  "loeste": "LOESTE"}
METHOD_LABELS = {"loe": "LOE", "ste": "STE", "tste": "t-STE", "soe": "SOE", "gnmds": "GNMDS", "ckl": "CKL",
                 "loeste": "LOE-STE"}
LAYOUTS = ("auto", "list-order", "crowd", "list-boolean", "list-count")
LOCAL_ADDRESSES = ("127.0.0.1", "localhost", "::1")


class UsageError(Exception):
    """A command line that cannot be run as given (exit status 2)."""


class DataError(Exception):
    """A file or setting that cannot be used (exit status 1)."""


# ======================================================================= parser
class _Parser(argparse.ArgumentParser):
    """argparse with errors on one line: ``loe-viz embed: error: ... (see loe-viz embed --help)``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def _print_message(self, message, file=None):
        """Print ``--help`` and ``--version`` to standard output, flushed: argparse ignores a failed write, so
        ``--help > /dev/full`` exited 0 having printed nothing (:func:`main` says it in one line)."""
        if message:
            file = file or sys.stderr
            file.write(message)
            if file is sys.stdout:
                file.flush()


def _checked(convert, what: str, ok, in_range: str | None = None):
    """An argparse ``type``: ``convert`` the text, then require ``ok(value)``."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"expected {in_range or what}, got {text!r}")
        return value
    return parse


_positive_int = _checked(int, "a positive integer", lambda v: v >= 1)
_seed = _checked(int, "a non-negative integer", lambda v: v >= 0)
_port = _checked(int, "a port number", lambda v: 0 <= v <= 65535, "a port number in 0..65535")
_fraction = _checked(float, "a fraction in [0, 1)", lambda v: 0.0 <= v < 1.0)
_nonnegative_float = _checked(float, "a number >= 0", lambda v: v >= 0.0 and v != float("inf"),
                              "a finite number >= 0")


def _origin(text: str) -> str:
    """``--allow-websocket-origin``: a host name or address, and optionally a port, as browsers send them."""
    host, _, port = text.rpartition(":") if re.fullmatch(r".*:\d*", text) else (text, "", "")
    if not re.fullmatch(r"[A-Za-z0-9*]([A-Za-z0-9.*-]*[A-Za-z0-9*])?|\[[0-9A-Fa-f:.]+\]", host or "") or (
            port and not 1 <= int(port) <= 65535) or text.endswith(":"):
        raise argparse.ArgumentTypeError(f"expected HOST[:PORT] such as lecture.example.org:5006 (a host name or "
                                         f"address, no scheme or path; a port in 1..65535), got {text!r}")
    return text


def _address(text: str) -> str:
    """``--address``: an address of this machine; '' (which Tornado takes as every interface) is refused, as every
    interface must be asked for by name (0.0.0.0)."""
    if not text.strip() or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"expected an address to listen on, such as 127.0.0.1 (this machine only) "
                                         f"or 0.0.0.0 (every network interface), got {text!r}")
    return text


def _positive_int_or_auto(text: str):
    """``--landmarks`` and ``-d``: a count, or ``auto`` (chosen from the data)."""
    if text == "auto":
        return "auto"
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}") from None


_positive_float = _checked(float, "a number > 0", lambda v: 0.0 < v < float("inf"), "a finite number > 0")


#: ``-d auto`` tries these dimensions (those the items and landmarks allow).
AUTO_DIMENSIONS = (1, 2, 3, 4, 5)


_LIMITS = ("array_bytes", "compression_ratio", "label_bytes")
#: An .npz member's expansion: never below 1 but where deflating made it larger, so a bound below 1 refuses all.
_ratio = _checked(float, "a number >= 1", lambda v: 1.0 <= v < float("inf"))


#: What the value of each ``--limit`` key counts, for its error message.
_LIMIT_VALUES = {"array_bytes": "a whole number of bytes > 0 (e.g. 4e9 or 4GiB)",
                 "compression_ratio": "a number >= 1 (e.g. 64; below 1 every .npz member above 16MiB is refused)",
                 "label_bytes": "a whole number of characters > 0 (e.g. 1e9 or 1GiB)"}


def _limit(text: str):
    """``--limit KEY=VALUE``: one of read_triplets' limits; a size may be written 4GiB or 4e9, never a fraction of
    a byte (``array_bytes=1.5`` was read as 1)."""
    from .app.limits import parse_amount  # the explorer's own sizes: the same units (no Panel imported)

    key, sep, value = text.partition("=")
    key = key.strip()
    if key not in _LIMITS or not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE with KEY one of {', '.join(_LIMITS)} (e.g. "
                                         f"array_bytes=4GiB), got {text!r}")
    try:
        value = parse_amount(value, size=True) if key.endswith("_bytes") else _ratio(value)
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(f"expected {key}=N with N {_LIMIT_VALUES[key]}, got {text!r}") from None
    return key, int(value) if float(value).is_integer() else value  # 4e9 bytes: 4,000,000,000, not 4e9 or ...0.0


def _add_reader_options(p) -> None:
    """How ``embed`` and ``info`` read FILE (the settings of read_triplets they expose)."""
    p.add_argument("--layout", choices=LAYOUTS, default="auto",
                   help="layout of a header-less four-column file (default: detected)")
    p.add_argument("--item-type", choices=("auto", "int", "str"), default="auto",
                   help="read item ids as integers or as text labels (default: detected)")
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="whether the first line names the columns (default: detected)")
    p.add_argument("--columns", metavar="ROLES",
                   help="the role of every column, comma-separated: head, near, far, left, right, answer, "
                   "response, or nothing to ignore a column (e.g. ',head,near,far'; default: from the header)")
    p.add_argument("--encoding", default="utf-8", help="text encoding of FILE (default utf-8)")
    p.add_argument("--skip-bad-rows", action="store_true",
                   help="drop the rows with a problem (counted, the first ones named) instead of stopping at the "
                   "first")
    # loe_viz.io's MAX_ARRAY_BYTES, MAX_COMPRESSION_RATIO and MAX_LABEL_BYTES (importing it here would import
    # numba for --help; tests/test_cli.py checks the two agree)
    p.add_argument("--limit", type=_limit, action="append", default=[], metavar="KEY=VALUE",
                   help="raise a bound read_triplets checks before allocating: array_bytes (one array of a "
                   ".npy/.npz, default 1073741824 = 1GiB), compression_ratio (the largest uncompressed / "
                   "compressed size of an .npz member above 16MiB, a number >= 1: 32), label_bytes (the "
                   "total length of the distinct text labels, counted in characters: 268435456 = 256MiB); "
                   "sizes are whole numbers, e.g. array_bytes=4e9 or array_bytes=4GiB; repeatable")


def build_parser() -> argparse.ArgumentParser:
    """The ``loe-viz`` argument parser (one sub-parser per sub-command)."""
    from . import __version__
    from .points import POINT_KINDS

    parser = _Parser(prog=PROG, description="Landmark Ordinal Embedding: serve the explorer, embed a "
                     "triplet file, simulate triplets, describe a file, copy a bundled sample.",
                     epilog=f"'{PROG} COMMAND --help' describes each command.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    # ---------------------------------------------------------------- explore
    p = sub.add_parser("explore", help="serve the interactive explorer in a browser",
                       description="Serve the LOE explorer (the app of 'panel serve apps/explorer.py') "
                       "on this machine. It listens on 127.0.0.1 only unless --address says otherwise. "
                       "A shared server's limits come from the environment: LOE_VIZ_MAX_N, LOE_VIZ_MAX_D, "
                       "LOE_VIZ_MAX_COLUMNS (whole numbers such as 5000 or 1e5), LOE_VIZ_MAX_BYTES (a run's "
                       "memory, such as 4GiB or 4e9) and LOE_VIZ_MAX_PAGES_PER_ADDRESS (0: no limit).")
    p.add_argument("--port", type=_port, default=5006, help="port to listen on (default 5006; 0: any free port)")
    p.add_argument("--address", type=_address, default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, this machine only; 0.0.0.0: every "
                   "network interface, see --allow-websocket-origin)")
    p.add_argument("--allow-websocket-origin", type=_origin, action="append", default=[], metavar="HOST[:PORT]",
                   help="a host name browsers may open the app under (repeatable); with an --address "
                   "other than localhost this machine's names are allowed already, add the one your "
                   "users type, e.g. --allow-websocket-origin=lecture.example.org:5006")
    p.add_argument("--warm", action="store_true",
                   help="build the app once before serving (imports and compiles everything, so the "
                   "first visitor does not wait)")
    p.add_argument("--show", action="store_true", help="open the page in a web browser")
    p.set_defaults(func=cmd_explore, subparser=p)

    # ------------------------------------------------------------------ embed
    p = sub.add_parser("embed", help="embed a triplet file and score it on held-out triplets",
                       description="Read a triplet file (any layout read_triplets reads: list-order or "
                       "crowd CSV/TSV, list-boolean, list-count, .npy/.npz), hold out a random share of "
                       "the triplets, fit the method on the rest, print the held-out accuracy (the share "
                       "of held-out triplets the embedding satisfies) and the time, and write the "
                       "embedding: item,label,x1..xd as CSV, or in the format -o's extension names.")
    p.add_argument("file", metavar="FILE", help="the triplet file")
    p.add_argument("--method", choices=list(METHOD_CLASSES), default="loe", help="embedding method (default loe)")
    p.add_argument("-d", "--dimensions", type=_positive_int_or_auto, default=2, metavar="D|auto",
                   help="embedding dimension (default 2); auto: the smallest of 1 to 5 whose error on triplets "
                   "held out of the training share (3-fold cross-validation) is within one standard error of "
                   "the best")
    p.add_argument("--landmarks", type=_positive_int_or_auto, default="auto", metavar="N|auto",
                   help="landmarks of loe and loeste (default auto: LOE's choice, or LOE-STE's start "
                   "from up to 4 x (d + 3) busy heads); LOE uses the triplets its landmarks head")
    p.add_argument("--heldout", type=_fraction, default=0.2, metavar="F",
                   help="fraction of the triplets held out for scoring (default 0.2; 0: fit on all, "
                   "report the training accuracy)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the split and of the method (default 0)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="where to write the embedding: .csv (item,label,x1..xd), .tsv (the same, tab-separated), "
                   ".npy (the n x d array) or .npz (arrays 'embedding' and 'labels'); default: FILE's name with "
                   "_METHOD.csv, in the current directory; '-': CSV on standard output")
    p.add_argument("-f", "--force", action="store_true", help="replace the output file if it exists")
    p.add_argument("--uncertainty", action="store_true",
                   help="with --method loe: also write every item's d x d covariance (LOE.uncertainty_, from the "
                   "rankings' Fisher information): columns cov_x1_x1, cov_x1_x2, ... in CSV/TSV, the array "
                   "'uncertainty' in .npz")
    _add_reader_options(p)
    p.add_argument("--max-seconds", type=_positive_float, default=None, metavar="S",
                   help="stop an iterative method (all but loe) after S seconds and keep its last iterate")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="draw progress bars on standard error (default: when it is a terminal)")
    p.set_defaults(func=cmd_embed, subparser=p)

    # --------------------------------------------------------------- simulate
    p = sub.add_parser("simulate", help="draw points and answered triplets (ground truth for teaching and tests)",
                       description="Draw n points of a kind (the ground truth) and triplets answered by a "
                       "noisy oracle: P(j closer to i than k) = sigmoid((D_ik - D_ij) / T) with squared "
                       "distances D. Writes the triplets (list-order CSV, or --layout) and the points "
                       "beside them (OUT stem + _points.csv).")
    p.add_argument("kind", metavar="KIND", choices=list(POINT_KINDS),
                   help="point configuration: " + ", ".join(POINT_KINDS))
    p.add_argument("-n", "--items", type=_positive_int, required=True, metavar="N", help="number of points")
    p.add_argument("-d", "--dimensions", type=_positive_int, default=2, metavar="D", help="dimension (default 2)")
    p.add_argument("--temperature", type=_nonnegative_float, default=1.0, metavar="T",
                   help="answer noise T (default 1.0; 0: every answer correct)")
    p.add_argument("--budget", type=_positive_float, default=100.0, metavar="c",
                   help="number of triplets as c * n * ln(n) (default c = 100)")
    p.add_argument("--landmarks", type=_positive_int, default=None, metavar="L",
                   help="draw triplets headed by L random landmark items (LOE's design) instead of "
                   "uniformly random triplets")
    p.add_argument("--layout", choices=LAYOUTS[1:], default="list-order",
                   help="layout of the triplet file (default list-order)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of the points (the answers use seed + 1)")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="triplet file (default triplets.csv; .npz/.npy write NumPy files)")
    p.add_argument("-f", "--force", action="store_true", help="replace the triplet and points files if they exist")
    p.set_defaults(func=cmd_simulate, subparser=p)

    # ------------------------------------------------------------------- info
    p = sub.add_parser("info", help="describe how a triplet file is read",
                       description="Read a triplet file and say how: its layout and format, items, "
                       "triplets, the items heading triplets and their spread, labels, skipped rows.")
    p.add_argument("file", metavar="FILE", help="the triplet file")
    _add_reader_options(p)
    p.set_defaults(func=cmd_info, subparser=p)

    # ---------------------------------------------------------------- samples
    p = sub.add_parser("samples", help="list the bundled sample files, or copy one here",
                       description="Without NAME, list the sample files that come with loe_viz (triplet "
                       "files and the ground truth they were drawn from). With NAME, copy that file to "
                       "the current directory (or to OUT), to read, embed or edit.")
    p.add_argument("name", metavar="NAME", nargs="?", help="the sample to copy (see the list)")
    p.add_argument("-o", "--output", metavar="OUT", help="where to copy it (default: NAME, in the current directory)")
    p.add_argument("-f", "--force", action="store_true", help="replace OUT if it exists")
    p.set_defaults(func=cmd_samples, subparser=p)
    return parser


# ===================================================================== helpers
def _say(*parts, err: bool = False) -> None:
    """Print one line; control characters of a file's name or label (an escape sequence, a line break) as '?'."""
    if err:
        print(*map(_printable, parts), file=sys.stderr, flush=True)
    else:
        with _to_stdout():
            print(*map(_printable, parts), flush=True)


class StdoutError(DataError):
    """Standard output cannot be written (a full disk, /dev/full); not a pipe whose reader stopped."""


@contextlib.contextmanager
def _to_stdout():
    """An ``OSError`` while writing standard output as this command's one-line error that says so."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise StdoutError(f"cannot write to standard output: {exc.strerror or exc}") from None


#: The library's names in its messages -> this command's options.
_OPTION_NAMES = [
    (r"pass (item_type|encoding|layout|columns)='?([\w-]*)'?",
     lambda m: f"pass --{m[1].replace('_', '-')}" + (f" {m[2]}" if m[2] else "")),
    (r"\bheader=True\b", "--header"), (r"\bheader=False\b", "--no-header"),
    (r"\b(item_type|layout|encoding)='([\w-]*)'", lambda m: f"--{m[1].replace('_', '-')} {m[2]}"),
    (r"^(columns|encoding|layout|item_type)\b(?! taken by)|\b(columns)=(?=[\s;,)]|$)",  # not the note on a header
     lambda m: f"--{(m[1] or m[2]).replace('_', '-')}"),
    (r"\berrors='skip'", "--skip-bad-rows"), (r" \(delimiter=' ' splits on any run of spaces and tabs\)", ""),
    (r"landmark_selection='maxmin' or ", ""), (r"\(STE\)", "(--method ste)"),
    (r"the LOESTE estimator \(", "--method loeste ("), (r"\bor STE, which fit", "or --method ste, which fit"),
    (r"read_triplets\(\.\.\., limits=\{'(\w+)': \.\.\.\}\) or loe_viz\.io\.MAX_\w+", r"--limit \1=..."),
    (r"\bn_landmarks=(\d+)", r"--landmarks \1"), (r"\bn_landmarks\b", "--landmarks"),
    (r"\bn_components=(\d+)", r"-d \1"), (r"\bn_components <= (\d+)", r"-d \1 or less"),
    (r"\bn_components\b", "d"), (r"\brandom_state\b", "--seed"),
]


def _method_terms(text: str) -> str:
    """``describe.method_advice`` with the methods named as ``--method`` values (d = 2, embed's default)."""
    return text.replace("LOE-STE or STE", "--method loeste or --method ste").replace("STE fits", "--method ste fits")


def _in_option_terms(message: str) -> str:
    """A library message with its advice in this command's terms (``pass item_type='str'`` -> ``--item-type str``)."""
    for pattern, repl in _OPTION_NAMES:
        message = re.sub(pattern, repl, message)
    return message


def _read(args):
    from .io import read_triplets

    path = args.file
    if not path:
        raise UsageError("FILE '' is an empty name; name the triplet file to read")
    if path == "-" and not os.path.exists(path):
        raise UsageError("FILE - (standard input) cannot be read: the reader goes back to the start of a file after "
                         "sniffing it; save the triplets to a file and name it")
    if os.path.isdir(path):
        raise DataError(f"{path} is a directory, not a triplet file")
    header = "auto" if args.header is None else args.header
    try:
        return read_triplets(path, layout=args.layout, item_type=args.item_type, header=header, columns=args.columns,
                             encoding=args.encoding, limits=dict(args.limit),
                             errors="skip" if args.skip_bad_rows else "raise")
    except ValueError as exc:  # the reader's message, with its advice in this command's terms
        msg = re.sub(r"\bheader= applies", "--header applies" if args.header else "--no-header applies", str(exc))
        msg = _in_option_terms(msg.replace("a .npy file names its arrays (triplets, or X and y)",
                                           "a .npy file holds one unnamed array, of list-order triplets"))
        if not str(exc).startswith(f"{path}:"):  # not the file's problem: an option's (--columns head,near)
            if args.columns is not None:  # the library's None is an empty entry here, its tuple the text given
                msg = re.sub(r" or None; got ('.*') in \(.*\)$",
                             lambda m: f" or empty (a column to ignore); got {m[1]} in {args.columns!r}", msg)
            raise UsageError(msg) from None
        raise DataError(msg) from None
    except OSError as exc:  # one that names no file, such as /proc/self/status, which cannot be sought in
        if exc.filename is not None:
            raise
        raise DataError(f"cannot read {path}: {exc.strerror or exc}") from None


def _check_output_named(args) -> None:
    """Refuse, before any work, an empty ``-o`` (``-o ''``, or ``-o "$OUT"`` with OUT unset): it names no file."""
    if args.output == "":
        raise UsageError("-o '' is an empty name; name a file, or leave -o out for the default name")


def _check_output(out: str, option: str = "-o", source: str | None = None, force: bool = False,
                  is_source: str = "is the input file; writing there would replace the triplets") -> None:
    """Refuse, before any work, an output path that cannot be written, that names the input ``source`` (saying
    ``is_source``), or that would replace a file (unless ``force``; a device or pipe is written, not replaced)."""
    from .io.writing import written_in_place

    if out == "-":
        return
    if os.path.isdir(out):
        raise UsageError(f"{option} {out} is a directory; name a file")
    if out.endswith(("/", os.sep)):  # a folder's name: 'z/' was written as a file named z
        folder = out.rstrip("/" + os.sep) or out
        if not os.path.lexists(folder):
            raise DataError(f"cannot write {out}: the folder {folder} does not exist")
        raise UsageError(f"{option} {out} ends with /, which names a folder, but {folder} is not one; name a file")
    if source is not None and os.path.exists(out) and os.path.samefile(out, source):
        raise UsageError(f"{option} {out} {is_source}")
    if not force and os.path.lexists(out) and not written_in_place(out):
        raise UsageError(f"{option} {out} exists; pass --force to replace it, or -o to name another file")
    folder = os.path.dirname(os.path.realpath(out))
    if not os.path.isdir(folder):
        named = os.path.dirname(out) or folder
        raise DataError(f"cannot write {out}: {named} is a file, not a folder" if os.path.lexists(folder) else
                        f"cannot write {out}: the folder {named} does not exist")
    if not os.access(out if os.path.exists(out) else folder, os.W_OK):
        try:  # a read-only mount (a CD, a locked share, a container's image) is not a matter of permissions
            read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except (AttributeError, OSError):  # no statvfs on this platform
            read_only = False
        raise DataError(f"cannot write {out}: " + (f"{os.path.dirname(out) or folder} is on a read-only file system"
                                                   if read_only else "permission denied"))


#: Output extensions embed and simulate write: CSV (also .txt, or no extension), TSV (also .tab), NumPy.
OUTPUT_EXTENSIONS = (".csv", ".txt", ".tsv", ".tab", ".npy", ".npz")


def _check_extension(out: str) -> None:
    """Refuse an output name whose extension names a format this command does not write (``-o emb.json`` was
    CSV text under that name); a device or pipe is written in place, whatever its name."""
    from .io.writing import written_in_place

    ext = os.path.splitext(out)[1].lower()
    if out != "-" and ext and ext not in OUTPUT_EXTENSIONS and not written_in_place(out):
        raise UsageError(f"-o {out}: the extension {ext} names no format this command writes; use .csv, .tsv, "
                         ".npy or .npz (or no extension, for CSV)")


def _printable(text) -> str:
    """A file's text for the terminal: control characters (escape sequences) shown as '?'."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def _notes(notes, labels, skipped: bool = True) -> list[str]:
    """The reader's notes on how it read a file, in this command's terms; ``skipped=False`` leaves out the count of
    skipped rows (said already). Answers read as 0/1 indices say how to read them the other way round; answers
    naming the chosen item name it by its id where the items have integer ids (``labels``), not text labels."""
    from .describe import reading_note
    from .io.layouts import ANSWER_NOTE

    out = []
    for note in notes:
        if not skipped and note.startswith("skipped "):
            continue
        note = reading_note(note, labels.dtype.kind != "i")
        if note == ANSWER_NOTE["index"]:  # a 0/1 'response' may as well mean "the left item is the closer"
            note += "; if 1 means the left item, pass --columns naming them head, near, far, response"
        out.append(_printable(_in_option_terms(note)))
    return out


def _number(x: float) -> str:
    """A number as people write it: 1,000,000 for 1e6 (not 1e+06), 0.5 as 0.5."""
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e15 else f"{x:g}"


def _seconds(s: float) -> str:
    return f"{s:.2f} s" if s < 60 else f"{s / 60:.1f} min"


def _estimator(method: str, d: int, landmarks, seed: int, max_seconds):
    import loe_viz

    cls = getattr(loe_viz, METHOD_CLASSES[method])
    kw = {"n_components": d, "random_state": seed}
    if method == "loe" or (method == "loeste" and landmarks != "auto"):  # "auto": LOE-STE's own start
        kw["n_landmarks"] = landmarks
    if method != "loe" and max_seconds is not None:  # LOE is not iterative: no time budget
        kw["time_budget"] = max_seconds
    return cls(**kw)


def _fit(model, method: str, train, n_items: int, progress):
    """Fit; ``--landmarks auto`` falls back to LOE's default where this LOE has no ``"auto"``."""
    try:
        model.fit(train, n_items=n_items, progress=progress)
    except ValueError as exc:
        if method in ("loe", "loeste") and model.n_landmarks == "auto" and str(exc).startswith("n_landmarks"):
            # An LOE without n_landmarks="auto": use its default (d + 3 landmarks).
            model.set_params(n_landmarks=None)
            model.fit(train, n_items=n_items, progress=progress)
        else:
            raise
    return model


def _landmarks_used(model):
    loe = getattr(model, "loe_", model)
    lm = getattr(loe, "landmarks_", None)
    return None if lm is None else len(lm)


# ==================================================================== commands
def cmd_samples(args) -> int:
    """``loe-viz samples [NAME]``."""
    import shutil

    from .data import SAMPLE_DESCRIPTIONS, SAMPLE_FILES, sample_dir, sample_path
    from .io.writing import write_file, written_in_place

    _check_output_named(args)
    if args.name is None:
        if args.output is not None:
            raise UsageError("-o names the copy of a sample; name the sample too (loe-viz samples NAME -o OUT)")
        width = max(map(len, SAMPLE_FILES))
        _say(f"bundled samples (in {sample_dir()}):")
        for name in SAMPLE_FILES:
            _say(f"  {name:<{width}}  {SAMPLE_DESCRIPTIONS[name]}")
        _say(f"'{PROG} samples NAME' copies one to the current directory; -o names the copy")
        return 0
    if args.name not in SAMPLE_FILES:
        raise UsageError(f"no bundled sample named {_printable(args.name)!r}; the samples are: {', '.join(SAMPLE_FILES)}")
    out = args.output if args.output is not None else args.name
    if out == "-":
        raise UsageError("-o - (standard output) is not a file to copy a sample to; name a file")
    src = sample_path(args.name)
    if os.path.splitext(out)[1].lower() not in ("", src.suffix) and not written_in_place(out):
        raise UsageError(f"-o {out}: a copy of {args.name} keeps its format; name it with {src.suffix}")
    _check_output(out, "-o" if args.output else "the copy", str(src), args.force,
                  is_source="is the bundled sample itself; name another file to copy it to")
    with _all_or_none(out, force=args.force) as (staged,), _writing(out), open(src, "rb") as fh:
        write_file(staged, lambda dst: shutil.copyfileobj(fh, dst))
    _say(f"copied {args.name} to {out}", err=_is_stdout(out))  # not into the copy itself (-o /dev/stdout)
    return 0


def _is_stdout(path: str) -> bool:
    """Whether ``path`` is the file standard output writes to (/dev/stdout, the terminal's device, a redirect's
    file)."""
    try:
        a, b = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def cmd_info(args) -> int:
    """``loe-viz info FILE``."""
    from .describe import method_advice, summarize

    t0 = time.perf_counter()
    data = _read(args)
    seconds = time.perf_counter() - t0
    s = summarize(data)
    ph = s["per_head"]
    _say(f"file       {args.file}")
    _say(f"read as    {s['layout']} layout, {s['format']} file, in {_seconds(seconds)}")
    labels = {"text": "text labels", "ids": "integer ids (not 0..n-1), kept as labels",
              "none": "numbered 0..n-1, no labels"}[s["labels"]]
    examples = f" (e.g. {', '.join(map(_printable, s['label_examples'][:3]))})" if s["label_examples"] else ""
    _say(f"items      {s['n_items']:,}: {labels}{examples}")
    _say(f"triplets   {s['n_triplets']:,}")
    if ph:
        _say(f"heads      {s['n_heads']:,} item(s) head a triplet; triplets per head: min {ph['min']:,}, "
             f"10% {ph['q10']:,.0f}, median {ph['median']:,.0f}, mean {ph['mean']:,.1f}, "
             f"90% {ph['q90']:,.0f}, max {ph['max']:,}")
    if s["unused_items"]:
        _say(f"unused     {s['unused_items']:,} item(s) appear in no triplet")
    if s["n_skipped"]:
        _say(f"skipped    {s['n_skipped']:,} row(s)")
    if s["n_repeated"]:
        _say(f"repeats    {s['n_repeated']:,} row(s) repeat an earlier row (the same head, closer and farther item)")
    if s["groups"]:
        _say(f"groups     {_printable(s['groups'])}")
    for note in _notes(s["notes"], data.labels):
        _say(f"note       {note}")
    _say(f"method     {_method_terms(method_advice(s))}")
    _say(_printable(s["sentence"]))
    return 0


def cmd_embed(args) -> int:
    """``loe-viz embed FILE``."""
    import numpy as np

    from .evaluation import train_test_split_triplets
    from .metrics import triplet_accuracy

    _check_output_named(args)
    if args.output is not None and os.path.abspath(args.output) in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"):
        args.output = "-"
    err = args.output == "-"  # the CSV goes to standard output, the messages to standard error
    d, out = args.dimensions, args.output
    if out is None:
        out = f"{os.path.splitext(os.path.basename(args.file))[0] or 'triplets'}_{args.method}.csv"
    if args.method in ("loe", "loeste") and args.landmarks != "auto" and args.landmarks < (
            AUTO_DIMENSIONS[0] if d == "auto" else d) + 3:
        if d == "auto":
            raise UsageError(f"--landmarks {args.landmarks} is too few for any -d: LOE needs at least d + 3 = 4")
        raise UsageError(f"--landmarks {args.landmarks} is too few for -d {d}: LOE needs at least d + 3 = {d + 3}")
    if args.method not in ("loe", "loeste") and args.landmarks != "auto":
        raise UsageError(f"--landmarks applies to --method loe and loeste; {args.method} fits every triplet")
    if args.method == "loe" and args.max_seconds is not None:
        raise UsageError("--max-seconds applies to the iterative methods (ste, tste, soe, gnmds, ckl, loeste); loe "
                         "is not iterative")
    _check_extension(out)
    if args.uncertainty and args.method != "loe":
        raise UsageError(f"--uncertainty applies to --method loe; {args.method} gives no per-item uncertainty")
    if args.uncertainty and os.path.splitext(out)[1].lower() == ".npy":
        raise UsageError(f"--uncertainty needs an output that holds more than one array: {out} is .npy; "
                         "use .csv, .tsv or .npz")
    _check_output(out, "-o" if args.output else "the output", args.file if os.path.isfile(args.file) else None,
                  args.force)
    t0 = time.perf_counter()
    data = _read(args)
    t_read = time.perf_counter() - t0
    n, m = int(data.n_items), int(data.n_triplets)
    skipped = f", skipped {data.n_skipped:,} row(s) with problems ('{PROG} info' names them)" * bool(data.n_skipped)
    _say(f"read {m:,} triplet{'s' * (m != 1)} over {n:,} items from {args.file} ({data.layout} layout, {data.format} file) "
         f"in {_seconds(t_read)}{skipped}", err=err)
    for note in _notes(data.notes, data.labels, skipped=False):  # how the file was read: the answers' encoding, the columns
        _say(f"note: {note}", err=err)
    if (guarded := _guarded_labels(data.labels, out)) is not None:
        _say(f"note: {guarded}", err=err)
    if m < 2:
        raise DataError(f"{args.file} holds {m} triplet{'s' * (m != 1)}: too few to embed (at least 2 are needed)")
    if d != "auto" and d >= n:
        raise DataError(f"-d {d} needs more than {d} items; {args.file} has {n}")
    if (note := _unused_note(data.triplets, data.labels)) is not None:
        _say(f"note: {note}", err=err)
    if args.heldout > 0 and (note := _copies_note(data.triplets, n)) is not None:
        _say(f"note: {note}", err=err)
    if args.heldout > 0:
        if (k := math.ceil(args.heldout * m)) > m - 1:  # the split's own rule; its message names test_size
            raise DataError(f"--heldout {args.heldout:g} holds out {k:,} of the {m:,} triplets and leaves none to fit "
                            f"on; lower --heldout (0.2 holds out {math.ceil(0.2 * m):,}), or pass --heldout 0 to fit "
                            "on all")
        train, test = train_test_split_triplets(data.triplets, test_size=args.heldout, random_state=args.seed)
    else:
        train, test = np.asarray(data.triplets), None
    label = METHOD_LABELS[args.method]
    show = (sys.stderr is not None and sys.stderr.isatty()) if args.progress is None else args.progress
    if d == "auto":
        d = _choose_dimension(args, train, n, label, err)
    elif (short := _too_few_heads(args, train, n, d)) is not None:
        raise DataError(short)
    model = _estimator(args.method, d, args.landmarks, args.seed, args.max_seconds)
    split = f"{len(train):,} training, {len(test):,} held out" if test is not None else f"all {m:,}"
    _say(f"fitting {label} in d = {d} on {split} triplets (seed {args.seed}) ...", err=err)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t1 = time.perf_counter()
        try:
            _fit(model, args.method, train, n, True if show else None)
        except ValueError as exc:
            raise DataError(_in_option_terms(str(exc))) from None
        t_fit = time.perf_counter() - t1
    for w in caught:
        if issubclass(w.category, DeprecationWarning):
            continue
        print(f"{PROG}: warning: {_printable(_by_label(_in_option_terms(str(w.message)), data.labels))}",
              file=sys.stderr, flush=True)
    Z = np.asarray(model.embedding_, dtype=np.float64)
    train_acc = triplet_accuracy(Z, train)
    detail = ""
    lm = _landmarks_used(model) if args.method in ("loe", "loeste") else None
    if lm is not None:
        detail = f", {lm} landmarks"
    if hasattr(model, "n_iter_"):
        k = int(model.n_iter_)
        detail += f", {k} iteration{'s' * (k != 1)}"
        if getattr(model, "stop_reason_", None) == "time_budget":
            detail += f" (stopped by --max-seconds {args.max_seconds:g})"
    if test is not None:
        m = len(test)
        _say(f"{label}: held-out accuracy {triplet_accuracy(Z, test):.4f} (training {train_acc:.4f}); "
             f"fit {_seconds(t_fit)}{detail}", err=err)
        if m < FEW_HELD_OUT:
            print(f"{PROG}: warning: only {m} triplet{'s' * (m != 1)} held out: the held-out accuracy is a rough "
                  f"estimate (its standard error can reach 0.5 / sqrt({m}) = {0.5 / m ** 0.5:.2f}); a larger "
                  "--heldout, or more triplets, makes it a measurement", file=sys.stderr, flush=True)
    else:
        _say(f"{label}: training accuracy {train_acc:.4f} (nothing held out); fit {_seconds(t_fit)}{detail}",
             err=err)
    cov = _uncertainty(model, Z, data.labels, err) if args.uncertainty else None
    if out == "-":
        what = _write_embedding(out, Z, data.labels, cov)
    else:
        with _all_or_none(out, force=args.force) as (staged,):
            what = _write_embedding(out, Z, data.labels, cov, path=staged)
    if out != "-":
        _say(f"wrote {what} to {out}; total {_seconds(time.perf_counter() - t0)}", err=err)
    return 0


#: Share of repeated rows above which embed says that held-out copies of training rows raise the held-out accuracy
#: (draws with replacement repeat a few: 4.8 % of the capitals crowd file, 5.3 % of the landmark sample).
COPIES_NOTE_SHARE = 0.1
#: Fewer held-out triplets than this and ``embed`` warns that the held-out accuracy is a rough estimate: its
#: standard error, up to 0.5 / sqrt(m), is then 0.05 or more.
FEW_HELD_OUT = 100


def _copies_note(triplets, n: int) -> str | None:
    """What a file whose rows often repeat does to the held-out accuracy, in words (None: few repeats)."""
    from .describe import repeated_rows

    m, r = len(triplets), repeated_rows(triplets, n)
    if r < COPIES_NOTE_SHARE * m:
        return None
    return (f"{r:,} of the {m:,} rows repeat an earlier row: a held-out row with a copy in the training share is "
            "scored on an answer the fit has seen, which raises the held-out accuracy; if they are copies of one "
            "answer rather than answers of several people, remove them")


def _unused_note(triplets, labels) -> str | None:
    """The items in no triplet, in words: the output gives them coordinates that nothing in the file determines
    (None: every item is in a triplet)."""
    from .describe import short_label, unused_items

    unused = unused_items(triplets, labels.size)
    if not unused.size:
        return None
    k, some = unused.size, labels[unused[:3]].tolist()
    names = ", ".join(str(v) if labels.dtype.kind == "i" else repr(short_label(v)) for v in some)
    return (f"{k:,} item(s) appear in no triplet (e.g. {names}{', ...' * (k > 3)}): their coordinates in the output "
            "are not determined by the data")


def _heads(train, n: int) -> int:
    """Distinct items heading the training triplets (one pass, no sort: 10^8 triplets in well under a second)."""
    import numpy as np

    return int(np.count_nonzero(np.bincount(np.asarray(train)[:, 0], minlength=n))) if len(train) else 0


def _too_few_heads(args, train, n: int, d: int, auto: bool = False) -> str | None:
    """Why LOE, or LOE-STE's start, cannot fit ``-d d`` with the landmarks it chooses itself, or with those of
    --landmarks (None: it can).

    Both need d + 3 landmarks (or --landmarks N) that head training triplets: checked before the fit, so that the
    message names what is short (items or heads) and a -d or --landmarks that works, or --method ste when none
    does."""
    if args.method not in ("loe", "loeste"):
        return None
    heads = _heads(train, n)
    if args.landmarks != "auto":  # at least d + 3, checked with the other options
        if args.landmarks <= heads:
            return None
        short = f"--landmarks {args.landmarks} is larger than the number of items ({n})" if heads >= n else (
            f"--landmarks {args.landmarks}: the {len(train):,} training triplet{'s have' * (len(train) != 1)}"
            f"{' has' * (len(train) == 1)} only {heads} distinct head item(s) (a landmark of LOE must head triplets)")
        if d + 3 <= heads:
            return f"{short}; use --landmarks {heads} or less"
        if heads - 3 < 1:
            return f"{short}; no -d works with {heads} head(s): use --method ste, which fits every triplet"
        return f"{short}; use --landmarks {heads} with -d {heads - 3} or less, or --method ste"
    if d + 3 <= heads:
        return None
    who = ("-d auto: LOE" if auto else f"-d {d}") if args.method == "loe" else (
        f"-d {'auto' if auto else d}: LOE-STE's start (LOE)")
    if heads >= n:
        short = f"{who} needs at least d + 3 = {d + 3} landmarks, but there are only {n} items"
    else:
        short = (f"{who} needs at least d + 3 = {d + 3} landmarks, items that head training triplets, but the "
                 f"{len(train):,} training triplet{'s have' if len(train) != 1 else ' has'} only {heads} distinct "
                 "head item(s)")
    if heads - 3 < 1:
        return f"{short}; no -d works with {heads} head(s): use --method ste, which fits every triplet"
    ste = ", or --method ste" * (args.method == "loeste" or heads < n)
    return f"{short}; use -d {heads - 3} or less{ste}"


def _choose_dimension(args, train, n: int, label: str, err: bool) -> int:
    """``-d auto``: cross-validate the method on the training triplets over the dimensions it can fit."""
    from .evaluation import select_dimension

    cap = args.landmarks - 3 if args.method in ("loe", "loeste") and args.landmarks != "auto" else n - 1
    dims = [k for k in AUTO_DIMENSIONS if k <= cap]
    if not dims:
        raise DataError(f"-d auto needs more than {AUTO_DIMENSIONS[0]} item(s); {args.file} has {n}")
    if (short := _too_few_heads(args, train, n, dims[0], auto=True)) is not None:
        raise DataError(short)
    why = f" (--landmarks {args.landmarks} allows d <= {cap})" if cap < AUTO_DIMENSIONS[-1] and cap < n - 1 else ""
    if args.method in ("loe", "loeste") and args.landmarks == "auto" and _heads(train, n) - 3 < dims[-1]:
        cap = _heads(train, n) - 3  # LOE's landmarks head training triplets
        dims, why = [k for k in dims if k <= cap], f" ({cap + 3} items head training triplets: d <= {cap})"
    if len(train) < 30:
        raise DataError(f"-d auto needs at least 30 training triplets to cross-validate; there are {len(train)}")
    _say(f"choosing d among {', '.join(map(str, dims))}{why}: {label} on 3 folds of the {len(train):,} training "
         "triplets ...", err=err)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the final fit's warnings are reported; the folds' would repeat them
        try:
            sel = select_dimension(lambda k: _estimator(args.method, k, args.landmarks, args.seed, args.max_seconds),
                                   train, dims, n_items=n, n_splits=3, random_state=args.seed)
        except ValueError as exc:
            raise DataError(_in_option_terms(str(exc))) from None
    for k, e, se in zip(sel.dims.tolist(), sel.mean_error, sel.sem):
        mark = "  <- chosen: the smallest within one standard error of the best" if k == sel.best_dim else ""
        _say(f"  d = {k}: held-out error {e:.4f} +- {se:.4f}{mark}", err=err)
    return int(sel.best_dim)


def _by_label(message: str, labels) -> str:
    """A warning's example items (``e.g. [0, 4, 7]``, ``[0, 4] are in different groups``: indices) by the file's
    labels or ids, where they differ."""
    from .describe import item_examples

    message = re.sub(r"\(e\.g\. \[([0-9, ]+)\]\)",
                     lambda m: f"(e.g. {item_examples(m[1].split(','), labels)})", message)
    return re.sub(r"; \[([0-9, ]+)\] are in different groups",  # describe.groups_note
                  lambda m: f"; {item_examples(m[1].split(','), labels)} are in different groups", message)


def _uncertainty(model, Z, labels, err: bool):
    """LOE's per-item covariances (NaN where it has none, with a warning saying why), and a line about them."""
    import numpy as np
    from scipy.stats import chi2

    from .describe import short_label

    n, d = Z.shape
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cov = model.uncertainty_
    for w in caught:  # too few comparisons per item for calibrated regions
        print(f"{PROG}: warning: {_printable(str(w.message).replace('uncertainty_ rests', 'the uncertainty rests'))}",
              file=sys.stderr, flush=True)
    if cov is None:
        reason = model.stages_.uncertainty.reason
        print(f"{PROG}: warning: no uncertainty for this fit: {reason}; its columns are left empty (nan)",
              file=sys.stderr, flush=True)
        return np.full((n, d, d), np.nan)
    half = np.sqrt(chi2.ppf(0.9, d) * np.linalg.eigvalsh(cov)[:, -1].clip(min=0.0))  # largest half-axis
    worst = int(np.argmax(half))
    name = labels[worst] if labels.dtype.kind == "i" else repr(short_label(labels[worst]))
    span = float(np.sqrt(((Z - Z.mean(axis=0)) ** 2).sum(axis=1).mean()))
    _say(f"uncertainty: the 90 % regions' longest half-axis is {np.median(half):.3g} for the median item, "
         f"{half[worst]:.3g} at most ({_printable(name)}); the items lie {span:.3g} from their centre (rms)",
         err=err)
    return np.asarray(cov, dtype=np.float64)


def _guarded_labels(labels, out: str) -> str | None:
    """The labels a CSV/TSV output writes with a leading ' (a label such as '=1+1' must not become a spreadsheet
    formula), in words: a join of the output to the file's own labels would miss them (None: there are none)."""
    from .describe import short_label
    from .io import spreadsheet_safe

    if labels.dtype.kind != "O" or os.path.splitext(out)[1].lower() in (".npy", ".npz"):
        return None  # ids, or arrays that keep the labels as they are
    changed = [v for v in labels.tolist() if spreadsheet_safe(v) != v]
    if not changed:
        return None
    k = len(changed)
    return (f"{k:,} label{'s' * (k != 1)} {'is' if k == 1 else 'are'} written with a leading ' so that spreadsheets "
            f"do not run {'it' if k == 1 else 'them'} as a formula (e.g. {short_label(changed[0])!r} as "
            f"{short_label(spreadsheet_safe(changed[0]))!r})")


def _write_embedding(out: str, Z, labels, cov=None, path: str | None = None) -> str:
    """Write the embedding (and ``cov``, per-item covariances) as OUT's extension says, to ``path`` (default
    ``out``: a staged name of :func:`_all_or_none`); returns what, in words."""
    import numpy as np

    # never left half written (a device such as /dev/null in place); a label such as '=1+1' never a formula
    from .io.writing import write_embedding_table, write_file

    n, d = Z.shape
    ext = os.path.splitext(out)[1].lower() if out != "-" else ".csv"
    if ext in (".npy", ".npz"):
        stored = labels if labels.dtype.kind == "i" else labels.astype(str)  # never a pickled object array
        with _writing(out):
            arrays = {"embedding": Z, "labels": stored} if cov is None else {
                "embedding": Z, "labels": stored, "uncertainty": cov}
            write_file(path or out, (lambda fh: np.save(fh, Z, allow_pickle=False)) if ext == ".npy" else (
                lambda fh: np.savez(fh, **arrays)))
        if ext == ".npy":  # rows by index: ids that were renumbered, or text labels, are not in the file
            same = labels.dtype.kind == "i" and np.array_equal(labels, np.arange(n))
            return f"the {n:,} x {d} embedding" + ("" if same else (
                " (row k is the item of index k, in the sorted order of the file's ids; a .npy holds no labels: "
                "write .npz or .csv to keep them)"))
        return f"the {n:,} x {d} embedding and its labels{' and covariances' * (cov is not None)} (arrays " + \
            ", ".join(f"'{a}'" for a in arrays) + ")"

    def table(text):
        write_embedding_table(text, Z, labels, cov, delimiter="\t" if ext in (".tsv", ".tab") else ",")

    def rows(binary):
        """UTF-8 whatever the locale's encoding (an 'ascii' standard output stopped at the first label such as
        'Chișinău', the file half written); the text layer is detached, so that it never closes ``binary``."""
        text = io.TextIOWrapper(binary, encoding="utf-8", newline="", write_through=True)
        try:
            table(text)
            text.flush()
        finally:
            text.detach()

    if out == "-":
        with _to_stdout():
            binary = getattr(sys.stdout, "buffer", None)
            if binary is None:  # a text stream of Python's own (a notebook's, io.StringIO): its text, as it takes it
                table(sys.stdout)
            else:
                sys.stdout.flush()
                rows(binary)
                binary.flush()
    else:
        with _writing(out):
            write_file(path or out, rows)
    cols = f"{','.join(f'x{k + 1}' for k in range(min(d, 3)))}{',...' if d > 3 else ''}"
    return f"{n:,} rows (item,label,{cols}{',cov_x1_x1,...' if cov is not None else ''})"


@contextlib.contextmanager
def _writing(out: str):
    """An ``OSError`` while writing ``out`` as this command's one-line error."""
    try:
        yield
    except OSError as exc:
        raise DataError(f"cannot write {out}: {exc.strerror or exc}") from None


def cmd_simulate(args) -> int:
    """``loe-viz simulate KIND -n N``."""
    import numpy as np

    from .io import write_triplets
    from .io.writing import write_file, written_in_place
    from .oracle import TripletOracle, total_budget
    from .points import make_points, min_dimensions

    _check_output_named(args)
    n, d = int(args.items), int(args.dimensions)
    if n < 3:
        raise UsageError("-n must be at least 3 (a triplet names three items)")
    if d < min_dimensions(args.kind):
        raise UsageError(f"-d {d} is too small for {args.kind} points: they need -d {min_dimensions(args.kind)} or more")
    m = total_budget(n, args.budget)
    if m < 1:
        raise UsageError(f"--budget {args.budget:g} asks for {args.budget:g} n ln n = 0 triplets at -n {n}; "
                         "raise --budget")
    _check_simulate_memory(n, d, m, args.budget)
    out, option = args.output or "triplets.csv", "-o" if args.output else "the output"  # name what was typed
    if out == "-":
        raise UsageError("-o - (standard output) cannot take both files simulate writes (the triplets and the "
                         "points); name a file")
    if written_in_place(out) or os.path.isdir(out):
        raise UsageError(f"{option} {out} is not a regular file, and simulate writes the points beside the triplets "
                         "(OUT's stem + _points.csv); name a file" + " with -o" * (option != "-o"))
    _check_extension(out)
    ext = os.path.splitext(out)[1].lower()
    if (ext == ".npz" and args.layout == "crowd") or (ext == ".npy" and args.layout != "list-order"):
        raise UsageError(f"--layout {args.layout} cannot be stored in {ext}; use "
                         + ("" if args.layout == "crowd" else ".npz or ") + "a text format (.csv/.tsv)")
    points_out = f"{os.path.splitext(out)[0]}_points.csv"
    _check_output(out, option, force=args.force)
    _check_output(points_out, "the points file", force=args.force)
    if os.path.realpath(out) == os.path.realpath(points_out) or (
            os.path.exists(out) and os.path.exists(points_out) and os.path.samefile(out, points_out)):
        # through a link the points were written over the triplets, and the run said it wrote both
        raise UsageError(f"{option} {out} and the points file {points_out} are one file (a link joins them); "
                         "name another file" + " with -o" * (option != "-o"))
    _check_simulate_disk(out, n, d, m, args.layout)
    t0 = time.perf_counter()
    X = make_points(args.kind, n, d, random_state=args.seed)
    oracle = TripletOracle(X, temperature=args.temperature, random_state=args.seed + 1)
    if args.landmarks is not None:
        l = int(args.landmarks)
        if l > n:
            raise UsageError(f"--landmarks {l} exceeds the {n} items")
        per = max(m // l, 1)
        landmarks = np.sort(np.random.default_rng(args.seed + 2).choice(n, size=l, replace=False))
        T = oracle.landmark_triplets(landmarks, per)
        design = f"triplets headed by {l} landmarks ({per:,} each)"
    else:
        T = oracle.uniform_triplets(m)
        design = "uniformly random triplets"
    header = ",".join(f"x{k + 1}" for k in range(d))
    with _all_or_none(out, points_out, force=args.force) as (tri_path, points_path):  # both or neither
        with _writing(out):
            write_triplets(tri_path, T, layout=args.layout, random_state=args.seed + 3)
        with _writing(points_out):
            write_file(points_path, lambda fh: np.savetxt(fh, X, delimiter=",", header=header, comments="",
                                                          fmt="%.6f"))
    _say(f"drew {n:,} {args.kind} points in d = {d} (seed {args.seed}) and {len(T):,} {design} "
         f"(c = {_number(args.budget)}, noise T = {args.temperature:g}) in {_seconds(time.perf_counter() - t0)}")
    from .metrics import triplet_accuracy

    _say(f"the true points satisfy {triplet_accuracy(X, T):.4f} of these triplets (the most any embedding "
         f"can expect on held-out ones)")
    _say(f"wrote the triplets to {out} ({args.layout}) and the points to {points_out}")
    return 0


@contextlib.contextmanager
def _all_or_none(*paths, force: bool = True):
    """The names to write ``paths`` under: hidden temporary files beside them (beside a link's target), renamed
    over them together once every one is written, so that a run stopped in between (Ctrl-C, SIGTERM, SIGHUP, a full
    disk) leaves no new file and the old ones as they were. A device or pipe is written in place, under its own name.

    Nothing is put in place once an ending signal arrived, even one whose ``SystemExit`` was lost
    (:data:`_ending_signal`). Without ``force`` an output that another process created meanwhile (two runs given the
    same ``-o``) is kept, and this run says so: the new file is linked in place, which fails if the name exists."""
    import secrets

    from .io.writing import written_in_place

    staged = []  # (the name written, the file it replaces, or None: written in place, the name as given)
    for path in paths:
        if written_in_place(path):
            staged.append((path, None, path))
        else:
            folder, base = os.path.split(os.path.realpath(path))
            staged.append((os.path.join(folder, f".tmp-{secrets.token_hex(8)}-{base}"), os.path.join(folder, base),
                           path))
    placed = []  # targets linked in place by this run (removed again if a later one cannot be)
    try:
        yield [name for name, _, _ in staged]
        hold = getattr(signal, "pthread_sigmask", None)  # no Ctrl-C between the renames
        held = hold(signal.SIG_BLOCK, {signal.SIGINT, *_ENDING_SIGNALS}) if hold else None
        try:
            if _ending_signal is not None:
                raise SystemExit(128 + _ending_signal)
            for name, target, given in staged:
                if target is None:
                    continue
                if not force and _link_in_place(name, target, given):
                    placed.append(target)
                    continue
                if os.path.exists(target):  # the replaced file's mode, as write_file keeps it
                    os.chmod(name, os.stat(target).st_mode & 0o7777)
                os.replace(name, target)
        finally:
            if hold:
                hold(signal.SIG_SETMASK, held)
    except BaseException:
        for target in placed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
        for name, target, _ in staged:
            if target is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name)
        raise


def _link_in_place(name: str, target: str, given: str) -> bool:
    """Put the written file ``name`` at ``target`` only if nothing is there (one atomic step); False where the
    file system has no hard links (the caller renames, after checking)."""
    try:
        os.link(name, target)
    except FileExistsError:
        raise DataError(f"cannot write {given}: another process created it while this run worked (another run "
                        "given the same -o?); it is kept as it is: pass --force to replace it, or -o to name "
                        "another file") from None
    except OSError:  # no hard links here (some network or FAT file systems): check, then rename
        if os.path.lexists(target):
            raise DataError(f"cannot write {given}: another process created it while this run worked (another run "
                            "given the same -o?); it is kept as it is: pass --force to replace it, or -o to name "
                            "another file") from None
        return False
    os.unlink(name)
    return True


def _check_simulate_memory(n: int, d: int, m: int, c: float) -> None:
    """Refuse, before anything is drawn, a simulation whose triplets and points would not fit in memory."""
    from ._validation import index_dtype
    from .resources import format_bytes, resolve_memory_limit

    # the triplet table (as the oracle draws it), the points and their temporaries, the interpreter;
    # measured: 1.51 GB of resident memory at n = 10^5, c = 100 (1.15 * 10^8 triplets), estimated 1.45 GB
    triplets, points = 3 * index_dtype(n).itemsize * m, 3 * 8 * n * d
    need = triplets + points + (128 << 20)
    limit, how = resolve_memory_limit(None)
    if need > limit:
        budget = _number(c).replace(",", "")  # as typed: 1000000, not 1e+06
        what, lower = ((f"-n {n:,} with --budget {budget} draws {m:,} triplets (c n ln n)" if m < 10**15 else
                        f"-n {n:,} with --budget {budget} draws {m:.3g} triplets (c n ln n)"), "-n or --budget")
        if points > triplets:  # the points' coordinates, not the triplets, fill the memory
            what, lower = f"-n {n:,} points in -d {d:,} dimensions", "-n or -d"
        raise UsageError(f"{what}, which need about {format_bytes(need)} of memory, more than this run may use "
                         f"({format_bytes(limit)}: {how}); lower {lower}")


def _check_simulate_disk(out: str, n: int, d: int, m: int, layout: str) -> None:
    """Refuse, before anything is drawn, files larger than the free space of their folder (a full disk would
    otherwise stop the write after the draw, which takes minutes at these sizes)."""
    import shutil

    from .resources import format_bytes

    ext, cell = os.path.splitext(out)[1].lower(), len(str(n - 1)) + 1  # an id and its delimiter
    extra = {"list-order": 0, "crowd": cell}.get(layout, len("False\n"))  # the answer, or the response y
    row = (3 if layout == "list-order" else 4) * 4 if ext in (".npy", ".npz") else 3 * cell + extra  # .npz: less
    need = m * row + n * d * 11 + 64  # the points: "-0.123456," per coordinate; the header lines
    free = shutil.disk_usage(os.path.dirname(os.path.realpath(out))).free
    if need > free:
        raise DataError(f"cannot write {out}: the {m:,} triplets and the points take up to {format_bytes(need)} and "
                        f"its folder has {format_bytes(free)} free; lower -n or --budget, or write .npz")


def websocket_origins(address: str, port: int, extra=()) -> list[str]:
    """Host names browsers may open the explorer under (Bokeh checks the websocket's origin).

    ``localhost`` and ``127.0.0.1`` always; listening beyond this machine
    (``--address`` not a loopback one) adds this machine's own names and the
    address itself; ``extra`` (``--allow-websocket-origin``) adds the rest.
    """
    import socket

    names = {"localhost", "127.0.0.1"}
    if address not in LOCAL_ADDRESSES:
        names |= {socket.gethostname(), socket.getfqdn()}
        if address not in ("0.0.0.0", "::", ""):
            names.add(address)
    return [f"{h}:{port}" for h in sorted(names) if h] + [o for o in extra if o]


def _has_browser() -> bool:
    """Whether Python's webbrowser module finds a browser to open a page with."""
    import webbrowser

    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def cmd_explore(args) -> int:
    """``loe-viz explore``: serve the explorer with Panel (imported here only)."""
    import logging
    import socket

    quiet = logging.NullHandler()  # the limits' warnings at import: said once, as this command's error below
    logging.getLogger("loe_viz.app.limits").addHandler(quiet)
    try:
        from .app.limits import environment_problems  # the server's limits, without importing Panel
    finally:
        logging.getLogger("loe_viz.app.limits").removeHandler(quiet)
    problems = environment_problems()  # a mistyped limit would otherwise be served with its default
    if problems:
        raise UsageError("; ".join(problems))
    address, port = args.address, int(args.port)
    try:  # before anything says "serving": an address of no interface here, or a port in use
        with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Tornado binds
            probe.bind((address, port))
            port = probe.getsockname()[1]  # --port 0: a free port, chosen here so that the allowed origins name it
    except OSError as exc:
        raise DataError(f"cannot listen on {address}:{args.port}: {exc.strerror or exc}") from None
    origins = websocket_origins(address, port, args.allow_websocket_origin)

    import panel as pn

    from .app.serving import guard_page_requests, serve_explorer_page  # as apps/explorer.py

    guard_page_requests()  # before the first request: a link may not choose its session (see serving.py)

    if args.warm:  # as panel serve --warm: build one page, and compile the kernels, before the first visitor
        from .app.warmup import warm_up

        t0 = time.perf_counter()
        serve_explorer_page()
        warm_up()
        _say(f"warmed up in {_seconds(time.perf_counter() - t0)}")
    everywhere = address in ("0.0.0.0", "::", "")
    host = "localhost" if address in LOCAL_ADDRESSES else socket.gethostname() if everywhere else address
    # --show opens a browser on this machine, which reaches a server listening everywhere as localhost (Bokeh's
    # own show() opened http://0.0.0.0:port/, which the message below never names)
    here = f"http://{'localhost' if everywhere else host}:{port}/"
    try:  # listening first: "serving" is said only of a server that listens
        server = pn.serve(serve_explorer_page, port=port, address=address, websocket_origin=origins,
                          show=False, start=False, threaded=False, verbose=False)
    except OSError as exc:
        raise DataError(f"cannot listen on {address}:{port}: {exc.strerror or exc}") from None
    _say(f"serving the LOE explorer on {address}:{port}: open http://{host}:{port}/"
         + (f" (on this machine: {here})" if everywhere else "") + " (Ctrl-C stops it)")
    if args.show and not _has_browser():
        _say(f"{PROG} explore: --show: no web browser found on this machine; open the address above in one")
    elif args.show:
        import webbrowser

        server.io_loop.add_callback(webbrowser.open, here)
    server.start()
    try:
        server.io_loop.start()
    except RuntimeError:  # the loop was stopped from a signal handler
        pass
    return 0


# ======================================================================== main
#: Signals that end a run as Ctrl-C does, where the platform has them: ``kill`` and ``timeout`` (SIGTERM), a closed
#: terminal or a dropped ssh session (SIGHUP), Ctrl-\ (SIGQUIT). Each left a hidden temporary file as large as the
#: output until SIGHUP and SIGQUIT joined SIGTERM here.
_ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name))


#: The ending signal this run received (None: none). Raised as ``SystemExit`` from the handler, it can be lost: a
#: signal that lands while numba compiles (an llvmlite ctypes callback) or while a module is imported is printed
#: as "Exception ignored" and the run goes on. Outputs are then not put in place (:func:`_all_or_none` checks this
#: first) and the run ends with the signal's status: a kill in the first second replaced the output anyway.
_ending_signal: int | None = None


def _terminated(signum, frame):
    """An ending signal (:data:`_ENDING_SIGNALS`) unwinds like Ctrl-C: a file being written is removed, not left
    behind."""
    global _ending_signal
    _ending_signal = signum
    raise SystemExit(128 + signum)


def main(argv=None) -> int:
    """Run ``loe-viz``; returns the exit status (2: usage error, 1: unusable data)."""
    global _ending_signal
    _ending_signal = None
    try:
        parser = build_parser()
        args, unknown = parser.parse_known_args(argv)
    except KeyboardInterrupt:  # Ctrl-C while starting: one line, as during a run
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # --help into a reader that stopped ('| head -1')
        _drop_stdout()
        return 128 + signal.SIGPIPE
    except OSError as exc:  # --help or --version into a full disk (> /dev/full): one line, as a run says it
        _drop_stdout()
        print(f"{PROG}: error: cannot write to standard output: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if unknown:  # named by the sub-command they were given to, whose --help lists its options
        getattr(args, "subparser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.command is None:
        print(f"{PROG}: error: name a command: explore, embed, simulate, info or samples (see {PROG} --help)",
              file=sys.stderr)
        return 2
    prog = f"{PROG} {args.command}"
    if sys.stdout is None:  # started with standard output closed ('>&-'): its descriptor would be reused by a file
        print(f"{prog}: error: standard output is closed; redirect it to a file or to /dev/null", file=sys.stderr)
        return 1
    catch = [] if args.command == "explore" or threading.current_thread() is not threading.main_thread() else [
        sig for sig in _ENDING_SIGNALS if signal.getsignal(sig) is signal.SIG_DFL]
    for sig in catch:
        signal.signal(sig, _terminated)
    # Started with standard error closed ('2>&-', cron): its messages are dropped. print(file=None) writes to
    # standard output, which put them inside the table of 'embed -o -'.
    dropped = open(os.devnull, "w") if sys.stderr is None else None
    if dropped is not None:
        sys.stderr = dropped
    try:
        status = _run(args, prog)
        return 128 + _ending_signal if _ending_signal is not None else status  # a signal the run did not see
    finally:
        for sig in catch:  # called from Python (a test, a script): the process keeps its own handling
            signal.signal(sig, signal.SIG_DFL)
        if dropped is not None:
            sys.stderr = None
            dropped.close()


def _drop_stdout() -> None:
    """Point standard output at /dev/null: the interpreter's last flush of what it holds must not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _environment_problems() -> list[str]:
    """What is wrong with the environment variables that numba reads on import, before anything imports it:
    NUMBA_NUM_THREADS=0 stopped every command with 'Number of threads specified must be > 0.', and a value such as
    2.0 printed a traceback and was ignored."""
    raw = os.environ.get("NUMBA_NUM_THREADS")
    if raw is None:
        return []
    try:
        ok = int(raw) >= 1
    except ValueError:
        ok = False
    return [] if ok else [f"NUMBA_NUM_THREADS={raw!r}: expected a whole number of threads above 0, such as 2 (or "
                          "leave it unset: one thread per core)"]


def _say_if_uncached(prog: str) -> None:
    """Say, once a run is done, that numba could not cache the kernels it compiled here: a read-only install and
    home (a cluster, a container) compile them again in every run, silently (15 s for an LOE fit of 0.14 s)."""
    jit = sys.modules.get("loe_viz.kernels._jit")
    if jit is not None and jit.UNCACHED and sys.stderr is not None:
        _say(f"{prog}: note: numba found no folder it can write to cache the compiled kernels in (beside the "
             "installed package, or ~/.cache/numba), so every run compiles them again (about 15 s); set "
             "NUMBA_CACHE_DIR to a folder you can write to keep them", err=True)


def _run(args, prog: str) -> int:
    """``args.func(args)``, its failures printed as one line; returns the exit status."""
    try:
        if problems := _environment_problems():
            raise UsageError("; ".join(problems))
        status = int(args.func(args) or 0)
        _say_if_uncached(prog)
        return status
    except BrokenPipeError:  # a reader such as 'head' stopped reading: not an error of this command
        _drop_stdout()
        return 128 + signal.SIGPIPE
    except StdoutError as exc:
        _drop_stdout()
        print(f"{prog}: error: {_printable(exc)}", file=sys.stderr)
        return 1
    except UsageError as exc:
        print(f"{prog}: error: {_printable(exc)} (see {prog} --help)", file=sys.stderr)
        return 2
    except (DataError, ValueError, OSError, MemoryError) as exc:
        msg = str(exc) or type(exc).__name__
        if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
            msg = f"{exc.filename}: {exc.strerror}"
        if isinstance(exc, MemoryError):
            msg = "not enough memory for this run" + (f": {exc}" if str(exc) else "")
        print(f"{prog}: error: {_printable(' '.join(msg.split()))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
