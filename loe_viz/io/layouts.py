"""The result type, layouts and column names, argument checks and the relabelling."""

from __future__ import annotations

import codecs
import numbers
import re
from collections.abc import Mapping, Set as AbstractSet
from dataclasses import dataclass, field

import numpy as np

TRIPLET_LAYOUTS = ("list-order", "crowd", "list-boolean", "list-count")
TRIPLET_FORMATS = ("csv", "tsv", "text", "npy", "npz")
#: Header names of every column role, compared lower-cased with only letters and digits kept and a
#: trailing id/index/idx/item/label/name dropped (``Head_ID`` is ``head``). ``winner`` is the answer
#: when ``left`` and ``right`` columns are present, otherwise the closer item.
COLUMN_NAMES = {
    "head": ("head", "anchor", "center", "centre", "query", "reference", "ref", "i"),
    "near": ("winner", "near", "nearer", "closer", "close", "positive", "pos", "similar", "j"),
    "far": ("loser", "far", "farther", "further", "negative", "neg", "dissimilar", "k"),
    "left": ("left",), "right": ("right",),
    "answer": ("winner", "answer", "choice", "chosen", "response", "selected", "selection", "pick"),
    "response": ("y", "response"),
}
#: Each layout's own header (any case): a first line of exactly these names is the header even when items of the
#: file share some of them (a body-parts file's 'head'); other names that are items below make the line data.
LAYOUT_HEADERS = {("head", "winner", "loser"), ("head", "left", "right", "winner"), ("head", "j", "k", "y")}
#: Endings a header name may carry after its role (``Head_ID``, ``y_item``), dropped when reading it.
ID_SUFFIXES = ("index", "label", "name", "item", "idx", "id")
LIMIT = 2**31 - 2  # item indices must be below this (int32 with n_items < 2**31 - 1)
MAX_NOTES = 5
_STEP = 1 << 18  # rows per block of the relabelling
_BLOCK = 1 << 14  # rows per block of a swap (its temporaries stay small)
ROLE_WORD = {"head": "head", "near": "closer (winner)", "far": "farther (loser)", "left": "left",
             "right": "right", "answer": "answer (winner)", "response": "response (y)"}
ITEM_WORD = {"head": "head", "near": "closer", "far": "farther", "left": "left", "right": "right"}
LAYOUT_ROLES = {"list-order": ("head", "near", "far"), "crowd": ("head", "left", "right", "answer"),
                "list-boolean": ("head", "near", "far", "response"), "list-count": ("head", "near", "far", "response")}
ANSWER_NOTE = {"label": "answers name the chosen item by its label", "side": "answers are 'left'/'right'",
               "index": "answers are 0/1 (0 = left item chosen, 1 = right item chosen)"}
ANSWER_MODES = tuple(ANSWER_NOTE)
TRUE, FALSE = {"1", "+1", "true", "t", "yes"}, {"0", "-1", "false", "f", "no"}
# a response token -> 1 (the row is in list-order), 0 (swap its last two items); an asked-for layout binds its encoding
RESPONSE = {"auto": dict.fromkeys(TRUE, 1) | dict.fromkeys(FALSE, 0),
            "list-boolean": dict.fromkeys(TRUE - {"+1"}, 1) | dict.fromkeys(FALSE - {"-1"}, 0),
            "list-count": {"1": 1, "+1": 1, "-1": 0}}
RESPONSE_WANT = {"auto": "one of True/False/1/0/-1", "list-boolean": "True/False or 1/0 (layout='list-boolean')",
                 "list-count": "+1 or -1 (layout='list-count')"}
# ASCII only: Python's int() and float() also take '1_0' and full-width digits, which ids in a file are not.
INT_RE = re.compile(r"[+-]?[0-9]+\Z", re.ASCII)
NUM_RE = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\Z|[+-]?(nan|inf|infinity)\Z", re.I | re.A)


@dataclass(frozen=True)
class TripletData:
    """Triplets read from a file, with the labels of their items.

    ``triplets`` (m, 3) holds list-order rows ``(head, closer, farther)`` of indices
    ``0..n_items-1`` (int32; int64 beyond 2**31 - 2 items); ``labels[i]`` is the item
    the file calls ``i`` (an object array of ``str`` for text labels, else ``int64``
    ids, ``arange(n_items)`` when the ids were indices). ``source`` is the path or
    buffer name, ``layout`` one of :data:`TRIPLET_LAYOUTS`, ``format`` the file
    format, ``n_skipped`` the rows dropped by ``errors="skip"`` and ``notes`` says
    how the file was read (relabelled ids, answer encoding, ignored columns...).
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


def err(source, msg, line=None) -> ValueError:
    """The error of a file: its name, the 1-based line if any, the problem (a cell of over 100 characters cut)."""
    msg = re.sub(r"\S{100,}", lambda m: f"{m[0][:40]}...({len(m[0]):,} characters)", msg)
    return ValueError(f"{source}: {'' if line is None else f'line {line}: '}{msg}")


def utf16_without_bom(raw: bytes) -> str | None:
    """The codec of UTF-16 text without a byte-order mark (``"utf-16-le"`` or ``"utf-16-be"``), judged from its
    first bytes: a NUL in nearly every other byte (not under letters beyond Latin-1, such as the 'ő' of a city's
    name) and, between, no NUL and mostly printable ASCII (digits, commas, Latin letters as UTF-16), not the small
    numbers of a binary file; None otherwise."""
    head = raw[:4096]
    head = head[:len(head) - len(head) % 2]
    if len(head) < 4:
        return None
    for zero, other, codec in ((1, 0, "utf-16-le"), (0, 1, "utf-16-be")):
        text = head[other::2]
        if head[zero::2].count(0) >= 0.9 * len(text) and 0 not in text and (
                sum(32 <= b < 127 or b in b"\t\r\n" for b in text) >= 0.9 * len(text)):
            return codec
    return None


def over_limit(source, what, lim, key, unit="") -> ValueError:
    """``what`` (a size, and how it compares) the limit ``lim[key]``, and how to raise it."""
    return err(source, f"{what} the limit of {lim[key]:,}{unit} (raise it with read_triplets(..., limits="
                       f"{{'{key}': ...}}) or loe_viz.io.MAX_{key.upper()})")


def is_number(tok: str) -> bool:
    return NUM_RE.match(tok.strip()) is not None


def refuse_unordered(values) -> None:
    """``labels[i]`` names item ``i``: a set has no order, and a mapping does not say whether its keys or its values
    are the labels."""
    if isinstance(values, (AbstractSet, Mapping)):
        raise ValueError(f"labels must list the items in index order (a list, tuple or array), got a "
                         f"{type(values).__name__}")


def as_labels(values) -> np.ndarray:
    """Distinct labels of a 1-D sequence of at least 3 strings or integers (0 to 2**63 - 1): integers as ``int64``
    ids, else stripped text in an object array (never a fixed-width ``<U`` array, whose every cell would be as long
    as the longest label)."""
    refuse_unordered(values)
    one_d = hasattr(values, "__iter__") and not isinstance(values, (str, bytes)) and getattr(values, "ndim", 1) == 1
    vals = (values.tolist() if isinstance(values, np.ndarray) else list(values)) if one_d else []
    if len(vals) < 3 or not all(isinstance(v, str) or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                                       and 0 <= v < 2**63) for v in vals):
        raise ValueError(f"labels must be a 1-D sequence of at least 3 strings or integers (0 to 2**63 - 1), got "
                         f"{values!r:.60}")
    if all(not isinstance(v, str) for v in vals):
        out = np.array(vals, dtype=np.int64)
    else:
        out = np.empty(len(vals), dtype=object)
        out[:] = [str(v).strip() for v in vals]
    if len(set(out.tolist())) != out.size:
        raise ValueError("labels must be distinct")
    return out


def check_read_args(format, layout, n_items, labels, header, delimiter, columns, answer, item_type, relabel,
                    encoding, errors) -> dict:
    for name, value, allowed in (
            ("format", format, ("auto",) + TRIPLET_FORMATS), ("layout", layout, ("auto",) + TRIPLET_LAYOUTS),
            ("answer", answer, ("auto",) + ANSWER_MODES), ("header", header, ("auto", True, False)),
            ("relabel", relabel, ("auto", True, False)), ("item_type", item_type, ("auto", "int", "str")),
            ("errors", errors, ("raise", "skip"))):
        if not any(value is v or (isinstance(v, str) and value == v) for v in allowed):
            raise ValueError(f"{name} must be one of {', '.join(map(str, allowed))}; got {value!r}")
    if n_items is not None:
        whole = isinstance(n_items, numbers.Real) and not isinstance(n_items, bool) and float(n_items).is_integer()
        if not whole or not 3 <= n_items <= LIMIT:  # 200.0 is 200, as the estimators' n_items takes it
            raise ValueError(f"n_items must be an integer from 3 to {LIMIT}, got {n_items!r}")
        n_items = int(n_items)
    lab = None
    if labels is not None:
        lab = as_labels(labels)
        if n_items not in (None, lab.size):
            raise ValueError(f"n_items={n_items} does not match len(labels)={lab.size}")
        n_items, item_type = int(lab.size), "int" if lab.dtype.kind == "i" else "str"
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1
                                  or delimiter in "\r\n\"#" or delimiter.isalnum()):
        raise ValueError(f"delimiter must be one character such as ',', '\\t', ';' or ' ', got {delimiter!r}")
    if columns is not None:
        columns = tuple(c.strip() or None for c in columns.split(",")) if isinstance(columns, str) else tuple(columns)
        if unknown := [c for c in columns if c is not None and c not in ROLE_WORD]:
            raise ValueError(f"columns entries must be one of {', '.join(ROLE_WORD)} or None; got {unknown[0]!r} in "
                             f"{columns}")
        layout_from_roles(columns, "columns")
    if relabel is True and n_items is not None and lab is None:
        raise ValueError("relabel=True cannot be combined with n_items (n_items fixes the ids as indices)")
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError):
        info = None
    if info is None or not getattr(info, "_is_text_encoding", True):  # base64, rot13, zlib: bytes <-> bytes codecs
        raise ValueError(f"encoding must name a text encoding such as utf-8, latin-1 or utf-16, got {encoding!r}")
    encoding = info.name
    return dict(format=format, layout=layout, n_items=n_items, labels=lab, header=header, delimiter=delimiter,
                columns=columns, answer=answer, item_type=item_type, relabel=relabel, encoding=encoding, errors=errors)


def layout_from_roles(roles, what) -> str:
    present = [r for r in roles if r is not None]
    dup = sorted({r for r in present if present.count(r) > 1})
    if dup:
        raise ValueError(f"{what} names the role {dup[0]!r} more than once")
    s = set(present)
    layout = "crowd" if {"left", "right", "answer"} & s else "list-boolean" if "response" in s else "list-order"
    missing = [r for r in LAYOUT_ROLES[layout] if r not in s]
    if missing:
        raise ValueError(f"{what} has no {', '.join(ROLE_WORD[r] for r in missing)} column")
    if s - set(LAYOUT_ROLES[layout]):
        raise ValueError(f"{what} mixes the roles {sorted(s - set(LAYOUT_ROLES[layout]))} into a {layout} layout")
    return layout


def name_role(name: str, crowd: bool):
    """The role a header cell names, or None."""
    s = "".join(ch for ch in name.lower() if ch.isalnum())
    order = ("head", "left", "right", "answer", "response", "near", "far") if crowd else (
        "head", "near", "far", "response", "left", "right", "answer")
    for c in [s] + [s[:-len(x)] for x in ID_SUFFIXES if s.endswith(x) and s != x]:
        for role in order:
            if c in COLUMN_NAMES[role]:
                return role
    return None


def roles_from_header(fields):
    """Map header cells to roles; returns (roles, layout or None, n_known, problem)."""
    crowd = any(name_role(f, True) in ("left", "right") for f in fields)
    roles = []
    for f in fields:
        r = name_role(f, crowd)
        roles.append(None if r in roles or r in (("near", "far", "response") if crowd else ("answer",)) else r)
    n_known = sum(r is not None for r in roles)
    try:
        return tuple(roles), layout_from_roles(roles, "header"), n_known, None
    except ValueError as exc:
        return tuple(roles), None, n_known, str(exc)


def index_dtype(n_items: int) -> np.dtype:
    return np.dtype(np.int32) if n_items < 2**31 - 1 else np.dtype(np.int64)


def bad_rows(h, a, b, n=None) -> np.ndarray:
    """The rows of the columns of item ids ``h, a, b`` with a negative id, an id from ``n`` on, or an item twice."""
    bad = (h < 0) | (a < 0) | (b < 0) | (h == a) | (h == b) | (a == b)
    return bad if n is None else bad | (h >= n) | (a >= n) | (b >= n)


def swap_sides(b, c, swap) -> None:
    """Exchange the items of columns ``b`` and ``c`` in the rows where ``swap``, in place (an XOR swap in blocks)."""
    for s in range(0, b.shape[0], _BLOCK):
        d = (b[s:s + _BLOCK] ^ c[s:s + _BLOCK]) * swap[s:s + _BLOCK]
        b[s:s + _BLOCK] ^= d
        c[s:s + _BLOCK] ^= d


def _present(tri, size) -> np.ndarray:
    present = np.zeros(size, dtype=bool)
    for s in range(0, tri.shape[0], _STEP):  # in blocks: fancy indexing copies its index as intp
        present[tri[s:s + _STEP].ravel()] = True
    return present


def _remap(tri, lookup, dtype) -> np.ndarray:
    """``lookup(tri)`` as ``dtype``, computed in blocks (in place when ``tri`` has that dtype)."""
    out = tri if tri.dtype == dtype else np.empty(tri.shape, dtype)
    for s in range(0, tri.shape[0], _STEP):
        out[s:s + _STEP] = lookup(tri[s:s + _STEP])
    return out


def finish_str(tri, names, opts, name, layout, fmt, skipped, notes) -> TripletData:
    """Text labels, indexed in sorted order (labels met only in skipped rows are dropped)."""
    order = sorted(np.flatnonzero(_present(tri, len(names))).tolist(), key=names.__getitem__)
    k = len(order)
    if opts["n_items"] is not None and opts["n_items"] != k:
        raise err(name, f"n_items={opts['n_items']} does not match the {k} distinct labels in the file; "
                        "pass labels= to fix the item set")
    rank, labels = np.zeros(len(names), dtype=index_dtype(k)), np.empty(k, dtype=object)
    rank[order], labels[:] = np.arange(k), [names[i] for i in order]
    if twins := unicode_twins(labels):
        notes = [*notes, f"{len(twins)} label(s) appear in two Unicode forms that print alike (e.g. {twins[0]!r}, "
                         f"composed and decomposed accents): each form is an item of its own; save the file in one "
                         f"form (NFC) if they name one item"]
    return TripletData(_remap(tri, rank.__getitem__, rank.dtype), labels, k, name, layout, fmt, skipped, tuple(notes))


def unicode_twins(labels) -> list[str]:
    """The labels (NFC) that stand in ``labels`` in more than one Unicode form ("Zürich" with a composed and with
    a decomposed "ü"): one name to a reader, two items to the file."""
    import unicodedata

    seen, twins = {}, []
    for lab in labels:
        if isinstance(lab, str) and not lab.isascii():
            form = unicodedata.normalize("NFC", lab)
            if seen.setdefault(form, lab) != lab and form not in twins:
                twins.append(form)
    return twins


def finish_int(tri, opts, name, layout, fmt, skipped, notes) -> TripletData:
    """Integer ids: kept as indices, or mapped to 0..k-1 in increasing order."""
    n, maxv, labels = opts["n_items"], int(tri.max()), opts["labels"]
    if labels is None and (n is not None or opts["relabel"] is False):  # every reader checked the ids against n
        size, lim = maxv + 1 if n is None else n, opts["limits"]
        if 8 * size > lim["array_bytes"]:  # a three-number file could otherwise declare 2**31 items (17 GB)
            whose = f"n_items={n:,}: the labels of its items take" if n is not None else (
                f"with relabel=False every id up to the largest, {maxv:,}, is an item (relabel='auto' numbers only "
                "the ids that appear), and their labels take")
            raise over_limit(name, f"{whose} {8 * size:,} bytes, above", lim, "array_bytes", " bytes")
        present = _present(tri, size)
        absent = present.size - np.count_nonzero(present)
        notes += [f"{absent} of the {present.size} items never appear in a triplet"] if absent else []
        labels = np.arange(present.size, dtype=np.int64)
    elif labels is None:  # ids up to 2**63: a presence table when they are dense, else sorted
        dense = maxv < max(tri.size, 1 << 16)
        labels = np.flatnonzero(_present(tri, maxv + 1)) if dense else np.unique(tri)
        if labels.size <= maxv or opts["relabel"] is True:
            rank = np.zeros(maxv + 1 if dense else 0, index_dtype(labels.size))
            if dense:
                rank[labels] = np.arange(labels.size)
            tri = _remap(tri, rank.__getitem__ if dense else lambda block: np.searchsorted(labels, block), rank.dtype)
            notes.append(f"item ids were not the contiguous range 0..{labels.size - 1}: the {labels.size} distinct ids "
                         f"({labels[0]}..{labels[-1]}) were mapped to 0..{labels.size - 1} in increasing order; "
                         "labels maps each index back to its id (to "
                         + (f"keep the ids, pass n_items={int(labels[-1]) + 1}; to " if labels[-1] < LIMIT else "")
                         + "share another file's numbering, such as a training file's, pass its labels=)")
        labels = labels.astype(np.int64)
    return TripletData(tri.astype(index_dtype(labels.size), copy=False), labels, int(labels.size), name, layout, fmt,
                       skipped, tuple(notes))
