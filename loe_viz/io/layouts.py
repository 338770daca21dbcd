"""The result type, the layouts and column names, argument checks and the row judge."""

from __future__ import annotations

import codecs
import math
import re
from dataclasses import dataclass, field

import numpy as np

#: Layouts understood by :func:`read_triplets` and :func:`write_triplets`.
TRIPLET_LAYOUTS = ("list-order", "crowd", "list-boolean", "list-count")

#: File formats (``format=`` values besides ``"auto"``).
TRIPLET_FORMATS = ("csv", "tsv", "text", "npy", "npz")

#: Header names recognised for every column role. Names are compared after
#: lower-casing and dropping everything but letters and digits (so ``Head_ID``
#: matches ``head``), and a trailing ``id``/``index``/``idx``/``item``/``label``/
#: ``name`` is ignored. ``winner`` is the answer column when ``left`` and
#: ``right`` columns are present, otherwise the closer item of a list-order row.
COLUMN_NAMES = {
    "head": ("head", "anchor", "center", "centre", "query", "reference", "ref", "i"),
    "near": ("winner", "near", "nearer", "closer", "close", "positive", "pos", "similar", "j"),
    "far": ("loser", "far", "farther", "further", "negative", "neg", "dissimilar", "k"),
    "left": ("left",),
    "right": ("right",),
    "answer": ("winner", "answer", "choice", "chosen", "response", "selected", "selection", "pick"),
    "response": ("y", "response"),
}

LIMIT = 2**31 - 2  # item indices must be below this (they fit int32 with n_items < 2**31 - 1)
MAX_NOTES = 5
ROLE_WORD = {"head": "head", "near": "closer (winner)", "far": "farther (loser)", "left": "left",
             "right": "right", "answer": "answer (winner)", "response": "response (y)"}
ITEM_WORD = {"head": "head", "near": "closer", "far": "farther", "left": "left", "right": "right"}
LAYOUT_ROLES = {"list-order": ("head", "near", "far"), "crowd": ("head", "left", "right", "answer"),
                "list-boolean": ("head", "near", "far", "response"),
                "list-count": ("head", "near", "far", "response")}
ANSWER_MODES = ("label", "side", "index")
ANSWER_NOTE = {"label": "answers name the chosen item by its label", "side": "answers are 'left'/'right'",
               "index": "answers are 0/1 (0 = left item chosen, 1 = right item chosen)"}
TRUE = {"1", "+1", "true", "t", "yes"}
FALSE = {"0", "-1", "false", "f", "no"}
_SUFFIXES = ("index", "label", "name", "item", "idx", "id")
# ASCII only: Python's int()/float() also take '1_0' and full-width digits, which a file's ids are not.
INT_RE = re.compile(r"[+-]?[0-9]+\Z", re.ASCII)
NUM_RE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z|[+-]?(nan|inf|infinity)\Z",
                    re.ASCII | re.IGNORECASE)


@dataclass(frozen=True)
class TripletData:
    """Triplets read from a file, with the labels of their items.

    Attributes
    ----------
    triplets : ndarray of shape (m, 3), int32 (int64 beyond 2**31 - 1 items)
        List-order rows ``(head, closer, farther)`` of contiguous item indices.
    labels : ndarray of shape (n_items,)
        ``labels[i]`` is the item the file calls ``i``: its text label (an
        object array of ``str``, sorted) or its original integer id (``int64``
        array; ``arange(n_items)`` when the ids were already indices).
    n_items : int
        Number of items (indices run over ``0..n_items-1``).
    source : str
        The path as given, the buffer's ``name``, or ``"<buffer>"``.
    layout : str
        The layout found: one of :data:`TRIPLET_LAYOUTS`.
    format : str
        ``"csv"``, ``"tsv"``, ``"text"`` (semicolon- or whitespace-separated),
        ``"npy"`` or ``"npz"``.
    n_skipped : int
        Rows dropped with ``errors="skip"``.
    notes : tuple of str
        Everything worth telling a person about how the file was read (relabelled
        ids, detected answer encoding, ignored columns, skipped lines...).
    """

    triplets: np.ndarray
    labels: np.ndarray
    n_items: int
    source: str
    layout: str
    format: str
    n_skipped: int = 0
    notes: tuple = field(default=())

    @property
    def n_triplets(self) -> int:
        """Number of triplets ``m``."""
        return int(self.triplets.shape[0])

    def __len__(self) -> int:
        return self.n_triplets

    def labelled(self) -> np.ndarray:
        """The triplets with every index replaced by its label, shape (m, 3)."""
        return self.labels[self.triplets]

    def __repr__(self) -> str:
        return (f"TripletData(source={self.source!r}, n_triplets={self.n_triplets}, n_items={self.n_items}, "
                f"layout={self.layout!r}, format={self.format!r}, n_skipped={self.n_skipped}, "
                f"notes={len(self.notes)})")


class RowError(Exception):
    """A problem with one row; becomes ``ValueError("<file>: line N: <message>")``."""


def err(source, msg, line=None) -> ValueError:
    return ValueError(f"{source}: {'' if line is None else f'line {line}: '}{msg}")


def is_number(tok: str) -> bool:
    return NUM_RE.match(tok.strip()) is not None


def text_labels(values, what="labels") -> np.ndarray:
    """Stripped, distinct text labels as an object array (no fixed-width ``<U`` copy)."""
    try:
        out = np.array([str(v).strip() for v in values] + [None], dtype=object)[:-1]
    except Exception:
        raise ValueError(f"{what} must hold strings or integers") from None
    if len(set(out.tolist())) != out.size:
        raise ValueError(f"{what} must be distinct")
    return out


# --------------------------------------------------------------------------------- arguments

def check_read_args(format, layout, n_items, labels, header, delimiter, columns, answer,
                    item_type, relabel, encoding, errors) -> dict:
    if format not in ("auto",) + TRIPLET_FORMATS:
        raise ValueError(f"format must be one of auto, {', '.join(TRIPLET_FORMATS)}; got {format!r}")
    if layout not in ("auto",) + TRIPLET_LAYOUTS:
        raise ValueError(f"layout must be one of auto, {', '.join(TRIPLET_LAYOUTS)}; got {layout!r}")
    if n_items is not None:
        if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 3:
            raise ValueError(f"n_items must be an integer >= 3, got {n_items!r}")
        if n_items > LIMIT:
            raise ValueError(f"n_items must be <= {LIMIT}, got {n_items}")
        n_items = int(n_items)
    lab = None
    if labels is not None:
        if isinstance(labels, (str, bytes)):
            raise ValueError("labels must be a sequence of item labels, got a single string")
        lab = np.asarray(labels)
        if lab.ndim != 1 or lab.size < 3:
            raise ValueError(f"labels must be a 1-D sequence of at least 3 labels, got shape {lab.shape}")
        if lab.dtype.kind in "iu":
            lab = lab.astype(np.int64)
            if np.unique(lab).size != lab.size:
                raise ValueError("labels must be distinct")
        elif lab.dtype.kind in "USO":
            lab = text_labels(lab.tolist())
        else:
            raise ValueError(f"labels must hold strings or integers, got dtype {lab.dtype}")
        if n_items is not None and n_items != lab.size:
            raise ValueError(f"n_items={n_items} does not match len(labels)={lab.size}")
        n_items = int(lab.size)
    if header not in ("auto", True, False):
        raise ValueError(f"header must be 'auto', True or False, got {header!r}")
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1
                                  or delimiter in "\r\n\"#" or delimiter.isalnum()):
        raise ValueError(f"delimiter must be one character such as ',', '\\t', ';' or ' ', got {delimiter!r}")
    if columns is not None:
        if isinstance(columns, str):
            columns = [c.strip() or None for c in columns.split(",")]
        for c in columns:
            if c is not None and c not in ROLE_WORD:
                raise ValueError("columns entries must be one of head, near, far, left, right, answer, "
                                 f"response or None; got {c!r}")
        columns = tuple(columns)
        layout_from_roles(columns, "columns")
    if answer not in ("auto",) + ANSWER_MODES:
        raise ValueError(f"answer must be one of auto, label, side, index; got {answer!r}")
    if item_type not in ("auto", "int", "str"):
        raise ValueError(f"item_type must be 'auto', 'int' or 'str', got {item_type!r}")
    if relabel not in ("auto", True, False):
        raise ValueError(f"relabel must be 'auto', True or False, got {relabel!r}")
    if relabel is True and n_items is not None and lab is None:
        raise ValueError("relabel=True cannot be combined with n_items (n_items fixes the ids as indices)")
    try:
        enc = codecs.lookup(encoding).name
    except (LookupError, TypeError):
        raise ValueError(f"encoding must name a text encoding, got {encoding!r}") from None
    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', got {errors!r}")
    if lab is not None:
        item_type = "int" if lab.dtype.kind == "i" else "str"
    return dict(format=format, layout=layout, n_items=n_items, labels=lab, header=header,
                delimiter=delimiter, columns=columns, answer=answer, item_type=item_type,
                relabel=relabel, encoding=enc, errors=errors)


# --------------------------------------------------------------------------------- headers

def layout_from_roles(roles, what) -> str:
    present = [r for r in roles if r is not None]
    dup = {r for r in present if present.count(r) > 1}
    if dup:
        raise ValueError(f"{what} names the role {sorted(dup)[0]!r} more than once")
    s = set(present)
    layout = ("crowd" if {"left", "right", "answer"} & s else "list-boolean" if "response" in s
              else "list-order")
    missing = [r for r in LAYOUT_ROLES[layout] if r not in s]
    if missing:
        raise ValueError(f"{what} has no {', '.join(ROLE_WORD[r] for r in missing)} column")
    extra = s - set(LAYOUT_ROLES[layout])
    if extra:
        raise ValueError(f"{what} mixes the roles {sorted(extra)} into a {layout} layout")
    return layout


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _name_role(name: str, crowd: bool):
    s = _norm(name)
    cands = [s] + [s[: -len(x)] for x in _SUFFIXES if s.endswith(x) and len(s) > len(x)]
    order = (("head", "left", "right", "answer", "response", "near", "far") if crowd
             else ("head", "near", "far", "response", "left", "right", "answer"))
    for c in cands:
        for role in order:
            if c in COLUMN_NAMES[role]:
                return role
    return None


def roles_from_header(fields):
    """Map header cells to roles; returns (roles, layout or None, n_known, problem)."""
    crowd = any(_name_role(f, True) in ("left", "right") for f in fields)
    roles, taken = [], set()
    for f in fields:
        r = _name_role(f, crowd)
        if r is not None and r in taken:
            r = None
        if r == "answer" and not crowd:
            r = "response" if _norm(f) in COLUMN_NAMES["response"] else None
        if crowd and r in ("near", "far", "response"):
            r = None
        if r is not None:
            taken.add(r)
        roles.append(r)
    n_known = sum(r is not None for r in roles)
    try:
        return tuple(roles), layout_from_roles(roles, "header"), n_known, None
    except ValueError as exc:
        return tuple(roles), None, n_known, str(exc)


# --------------------------------------------------------------------------------- one row

class Judge:
    """Words the first problem of one row of raw fields (only flagged rows get here)."""

    def __init__(self, roles, layout, kind, opts):
        self.roles, self.layout, self.kind, self.opts = roles, layout, kind, opts
        self.limit = opts["n_items"] if (opts["n_items"] is not None and opts["labels"] is None) else None
        lab = opts["labels"]
        self.lookup = None if lab is None else {v: i for i, v in enumerate(lab.tolist())}
        self.names = ", ".join(r or "(ignored)" for r in roles)

    def item(self, tok: str, role: str):
        """The id of one item cell (raw value for integer ids) or a RowError."""
        what, t = ITEM_WORD[role], tok.strip()
        if not t:
            raise RowError(f"empty {what} field")
        if self.kind == "str":
            if self.opts["item_type"] != "str" and is_number(t):
                raise RowError(f"mixed types: {what} item {t!r} is a number, but the file's ids are text labels; "
                               "pass item_type='str' to read numbers as labels too")
            if self.lookup is not None and t not in self.lookup:
                raise RowError(f"{what} item {t!r} is not one of the given labels")
            return t
        if INT_RE.match(t):
            v = int(t)
        elif NUM_RE.match(t):
            f = float(t)
            if not math.isfinite(f) or f != int(f):
                raise RowError(f"non-integer item index {t!r} in the {what} column")
            v = int(f)
        else:
            raise RowError(f"mixed types: {what} item {t!r} is not an integer, but the file's ids are integers; "
                           "pass item_type='str' to read every id as a text label")
        if v < 0:
            raise RowError(f"negative item index {t} in the {what} column")
        if v >= 2**63 or (v >= LIMIT and self.limit is None and self.opts["relabel"] is False):
            raise RowError(f"item index {t} in the {what} column is too large: indices must be below {LIMIT} "
                           "(2**31 - 2) and ids below 2**63; pass item_type='str' to read large ids as labels")
        if self.limit is not None and v >= self.limit:
            raise RowError(f"item index {v} in the {what} column is out of range for n_items={self.limit}")
        if self.lookup is not None and v not in self.lookup:
            raise RowError(f"{what} item {v} is not one of the given labels")
        return v

    def problem(self, fields, mode=None) -> str | None:
        """The row's first problem, or None; ``mode`` is the file's answer encoding (crowd)."""
        try:
            if len(fields) != len(self.roles):
                raise RowError(f"expected {len(self.roles)} fields ({self.names}), got {len(fields)}")
            cell = {r: fields[i] for i, r in enumerate(self.roles) if r is not None}
            items = [r for r in ("head", "near", "far", "left", "right") if r in cell]
            ids = [self.item(cell[r], r) for r in items]
            if len(set(ids)) < 3:
                shown = tuple(cell[r].strip() for r in items)
                raise RowError(f"the row repeats an item {shown}; a triplet needs three distinct items")
            if "answer" in cell:
                return self.answer_problem(cell, mode)
            if "response" in cell:
                y = cell["response"].strip()
                if y.lower() not in TRUE | FALSE:
                    raise RowError(f"the response {y!r} is not one of True/False/1/0/-1")
        except RowError as exc:
            return str(exc)
        return None

    def answer_problem(self, cell, mode) -> str | None:
        ans = cell["answer"].strip()
        if not ans:
            return "the answer field is empty"
        if mode is None:
            return None
        h, a, b = (cell[r].strip() for r in ("head", "left", "right"))
        fits = {"label": ans in (a, b) or (self.kind == "int" and INT_RE.match(ans) is not None
                                           and any(INT_RE.match(x) and int(x) == int(ans) for x in (a, b))),
                "side": ans.lower() in ("left", "l", "right", "r"), "index": ans in ("0", "1")}
        if fits.get(mode, any(fits.values())):
            return None
        want = {"label": "the label of the left or right item", "side": "'left' or 'right'",
                "index": "0 (left) or 1 (right)"}.get(mode, "the left or right item's label, 'left'/'right', or 0/1")
        return (f"the answer {ans!r} names none of the row's items (head {h!r}, left {a!r}, right {b!r}); "
                f"it must be {want}")


# --------------------------------------------------------------------------------- finishing

def index_dtype(n_items: int) -> np.dtype:
    return np.dtype(np.int32) if n_items < 2**31 - 1 else np.dtype(np.int64)


def _as_index(tri, n):
    return tri if tri.dtype == index_dtype(n) else tri.astype(index_dtype(n))


def finish_str(tri, names, opts, name, layout, fmt, skipped, notes) -> TripletData:
    """Text labels: index them in sorted order (labels met only in skipped rows are dropped)."""
    present = np.zeros(len(names), dtype=bool)
    present[tri.ravel()] = True
    k = int(present.sum())
    order = sorted(np.flatnonzero(present).tolist(), key=names.__getitem__)
    rank = np.full(len(names), -1, dtype=index_dtype(k))
    rank[np.asarray(order, dtype=np.int64)] = np.arange(k)
    labels = np.empty(k, dtype=object)
    labels[:] = [names[i] for i in order]
    if opts["n_items"] is not None and opts["n_items"] != k:
        raise err(name, f"n_items={opts['n_items']} does not match the {k} distinct labels in the file; "
                        "pass labels= to fix the item set")
    return TripletData(rank[tri], labels, k, name, layout, fmt, skipped, tuple(notes))


def finish_int(tri, maxv, opts, name, layout, fmt, skipped, notes) -> TripletData:
    """Integer ids: keep them as indices or map them to 0..k-1 (in place, in blocks)."""
    n, relabel, step = opts["n_items"], opts["relabel"], 1 << 20
    if n is not None or relabel is False:
        n = maxv + 1 if n is None else n
        if maxv >= n:
            raise err(name, f"item index {maxv} is out of range for n_items={n}")
        present = np.zeros(n, dtype=bool)
        present[tri.ravel()] = True
        absent = int(n - present.sum())
        if absent:
            notes.append(f"{absent} of the {n} items never appear in a triplet")
        return TripletData(_as_index(tri, n), np.arange(n, dtype=np.int64), n, name, layout, fmt, skipped,
                           tuple(notes))
    if maxv < max(tri.size, 1 << 16):
        present = np.zeros(maxv + 1, dtype=bool)
        present[tri.ravel()] = True
        k = int(present.sum())
        if k == maxv + 1 and relabel == "auto":
            return TripletData(_as_index(tri, k), np.arange(k, dtype=np.int64), k, name, layout, fmt, skipped,
                               tuple(notes))
        labels = np.flatnonzero(present).astype(np.int64)
        table = (np.cumsum(present, dtype=np.int64) - 1).astype(tri.dtype)
        for s in range(0, tri.shape[0], step):
            tri[s:s + step] = table[tri[s:s + step]]
    else:
        labels = np.unique(tri).astype(np.int64)
        for s in range(0, tri.shape[0], step):
            tri[s:s + step] = np.searchsorted(labels, tri[s:s + step])
    k = labels.size
    if k != maxv + 1 or labels[0] != 0:
        notes.append(f"item ids were not the contiguous range 0..{k - 1}: the {k} distinct ids "
                     f"({int(labels[0])}..{int(labels[-1])}) were mapped to 0..{k - 1} in increasing order; "
                     "labels maps each index back to its id")
    return TripletData(_as_index(tri, k), labels, k, name, layout, fmt, skipped, tuple(notes))
