"""How a triplet file was read, in numbers and words: :func:`summarize`.

Shared by ``loe-viz info`` and the explorer's "Your triplets" mode; it needs
NumPy alone, so a terminal command that only describes a file stays quick.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["summarize", "method_advice", "repeated_rows", "short_label", "reading_note", "unused_items",
           "comparison_groups", "groups_note"]

#: Triplets per item that a head needs for LOE's own ranking of it (``loe.WELL_COVERED``; the paper's
#: design draws about c ln n per item and landmark). Below it, in the 5th busiest head (LOE's d + 3
#: landmarks at d = 2), LOE-STE and STE fit the file better: held-out accuracy on the capitals crowd
#: file (about 2 per item) LOE 0.843 against 0.960, on uniformly random triplets over 2000 items
#: (0.38) 0.616 against 0.674, over 10^5 items (0.009) 0.500 against 0.674.
LOE_DESIGN_PER_ITEM = 5


def short_label(label, limit: int = 60) -> str:
    """A label as a line of text shows it: over ``limit`` characters, its start and its length
    (``'AAAA...(60,000 characters)'``), as the reader's messages cut a long cell."""
    text = str(label)
    return text if len(text) <= limit else f"{text[:40]}...({len(text):,} characters)"


def item_examples(items, labels=None) -> str:
    """Items as a message gives examples of them: ``[0, 4, 7]`` by index, or by the labels (``'Oslo', 'Rome'``) or
    ids that a file gave them (:attr:`loe_viz.io.TripletData.labels`; indices 0..n-1 stay indices)."""
    items = [int(i) for i in items]
    if labels is None or (labels.dtype.kind == "i" and labels[0] == 0 and labels[-1] == labels.size - 1):
        return str(items)
    return ", ".join(repr(short_label(labels[i])) if labels.dtype.kind == "O" else str(labels[i]) for i in items)


def reading_note(note: str, text_labels: bool) -> str:
    """A note of :func:`loe_viz.read_triplets` for someone without the Python call (the command line, the page).

    Answers naming the chosen item name it by its id where the items have no text labels, and renumbered
    ids are kept as labels: the reader's ways to keep them (``n_items=``, ``labels=``) are no options there.
    """
    import re

    from .io.layouts import ANSWER_NOTE

    if note == ANSWER_NOTE["label"] and not text_labels:
        note = note.replace("by its label", "by its id")
    return re.sub(r"; labels maps each index back to its id \(.*\)$", "; each item keeps its id as its label", note)


def unused_items(triplets, n_items: int) -> np.ndarray:
    """The items ``0..n_items-1`` that appear in no triplet, in increasing order."""
    seen = np.zeros(n_items, dtype=bool)
    seen[np.asarray(triplets).ravel()] = True
    return np.flatnonzero(~seen)


def comparison_groups(triplets, n_items: int) -> np.ndarray:
    """The groups of items that the triplets relate: ``g[i]`` is the group of item ``i`` (0 the largest), -1 for
    an item in no triplet. Two items are in one group when a chain of triplets joins them.

    Answers never relate two groups, so their relative position, rotation and scale are not determined by
    the data. One pass of a union-find over the triplets (1.38 * 10^6 rows: about 7 ms).
    """
    from .kernels.triplets import join_items  # numba: imported where groups are counted

    T = np.ascontiguousarray(triplets)
    root = np.arange(n_items, dtype=np.int64)
    join_items(T, root)
    unused = unused_items(T, n_items)
    sizes = np.bincount(root, minlength=n_items)
    sizes[unused] = 0  # an item in no triplet is its own root, and no group
    roots = np.flatnonzero(sizes)
    rank = np.full(n_items, -1, dtype=np.int64)
    rank[roots[np.argsort(-sizes[roots], kind="stable")]] = np.arange(roots.size)
    groups = rank[root]
    groups[unused] = -1
    return groups


def groups_note(groups: np.ndarray, labels=None) -> str:
    """What :func:`comparison_groups` found, as a sentence for a warning; empty for one group."""
    sizes = np.bincount(groups[groups >= 0])
    sizes = sizes[sizes > 0]
    if sizes.size < 2:
        return ""
    shown = [f"{k:,}" for k in sizes[:4 if sizes.size > 5 else 5]]  # "the other 1 groups": five are listed
    of = f"of {', '.join(shown[:-1])} and {shown[-1]} items" if sizes.size <= 5 else (
        f"the largest four of {', '.join(shown[:-1])} and {shown[-1]} items, the other {sizes.size - 4:,} groups "
        f"of {int(sizes[4:].sum()):,} items together")
    first = [int(np.argmax(groups == g)) for g in range(min(sizes.size, 3))]
    return (f"the triplets split the items into {sizes.size:,} groups that no triplet relates ({of}; "
            f"{item_examples(first, labels)} are in different "
            "groups): where the groups lie relative to one another (position, rotation, scale) is arbitrary in the "
            "embedding; triplets that mix the groups would fix it")


def repeated_rows(triplets, n_items: int) -> int:
    """Rows of ``triplets`` equal to an earlier row (the same head, closer and farther item).

    Repeats are real data where each is another answer to the question (draws with replacement,
    several people); copies of one answer are not, and held-out copies of training rows raise a
    held-out accuracy. One sort of an int64 key per row (3 * 10^7 rows: about 0.5 s).
    """
    T = np.asarray(triplets)
    if len(T) < 2:
        return 0
    n = int(n_items)
    if n ** 3 < 2**63:
        key = (T[:, 0].astype(np.int64) * n + T[:, 1]) * n + T[:, 2]
        key.sort()
        return int(np.count_nonzero(key[1:] == key[:-1]))
    S = T[np.lexsort(T.T[::-1])]
    return int(np.count_nonzero((S[1:] == S[:-1]).all(axis=1)))


def summarize(data) -> dict:
    """How a triplet file was read, in numbers and words.

    Parameters
    ----------
    data : loe_viz.io.TripletData

    Returns
    -------
    dict
        ``source``, ``layout``, ``format``, ``n_items``, ``n_triplets``,
        ``n_heads`` (items heading at least one triplet), ``per_head`` (min,
        median, mean, max and the 10 % / 90 % quantiles of the triplets per head,
        over the heads), ``head_counts`` (triplets per head, sorted from the
        busiest, shape (n_heads,)), ``unused_items`` (items in no triplet),
        ``labels`` (``"text"``, ``"ids"`` for integer ids that are not the
        indices, or ``"none"``), ``label_examples``, ``n_skipped``, ``n_repeated``
        (rows equal to an earlier row, :func:`repeated_rows`), ``n_groups`` (groups of items that no
        triplet relates, :func:`comparison_groups`), ``groups`` (:func:`groups_note`), ``notes`` and ``sentence``.
    """
    T = np.asarray(data.triplets)
    n = int(data.n_items)
    m = int(T.shape[0])
    heads = np.bincount(T[:, 0], minlength=n) if m else np.zeros(n, dtype=np.int64)
    counts = np.sort(heads[heads > 0])[::-1]
    labels = np.asarray(data.labels)
    if labels.dtype.kind in "USO":
        kind = "text"
    elif labels.size == n and np.array_equal(labels, np.arange(n)):
        kind = "none"
    else:
        kind = "ids"
    per_head = {}
    if counts.size:
        per_head = {"min": int(counts[-1]), "median": float(np.median(counts)), "mean": float(counts.mean()),
                    "max": int(counts[0]), "q10": float(np.quantile(counts, 0.1)),
                    "q90": float(np.quantile(counts, 0.9))}
    examples = [short_label(v) for v in labels[:5].tolist()] if kind != "none" else []
    out = {
        "source": os.path.basename(str(data.source)) or str(data.source), "layout": data.layout,
        "format": data.format, "n_items": n, "n_triplets": m, "n_heads": int(counts.size),
        "per_head": per_head, "head_counts": counts, "unused_items": int(unused_items(T, n).size),
        "labels": kind, "label_examples": examples, "n_skipped": int(data.n_skipped),
        "n_repeated": repeated_rows(T, n),
        "notes": tuple(data.notes),
    }
    groups = comparison_groups(T, n) if m else np.full(n, -1)
    out["n_groups"], out["groups"] = int(groups.max()) + 1, groups_note(groups, labels)
    out["sentence"] = _sentence(out)
    return out


def _sentence(s: dict) -> str:
    ph = s["per_head"]
    text = (f"Read {s['n_triplets']:,} triplet{'s' if s['n_triplets'] != 1 else ''} over {s['n_items']:,} items "
            f"from {s['source']} "
            f"({s['layout']} layout, {s['format']} file). ")
    if ph:
        if ph["min"] == ph["max"]:
            spread = f"{ph['max']:,} triplet{'s' if ph['max'] != 1 else ''} each"
        else:
            spread = f"from {ph['min']:,} to {ph['max']:,} triplets each (median {ph['median']:,.0f})"
        text += f"{s['n_heads']:,} item(s) head a triplet, {spread}. "
    if s["labels"] == "text":
        text += "Items are named by text labels (e.g. " + ", ".join(s["label_examples"][:3]) + ")."
    elif s["labels"] == "ids":
        text += ("Items are named by integer ids that are not 0..n-1; they were mapped to indices "
                 "and are kept as labels.")
    else:
        text += "Items are numbered 0..n-1 (no labels)."
    if s["unused_items"]:
        text += f" {s['unused_items']:,} item(s) appear in no triplet."
    if s["n_skipped"]:
        text += f" {s['n_skipped']:,} row(s) were skipped."
    if s["n_repeated"]:
        text += f" {s['n_repeated']:,} row(s) repeat an earlier row."
    if s["groups"]:
        text += f" Note: {s['groups']}."
    return text


def method_advice(s: dict, d: int = 2) -> str:
    """Which method suits the triplets that :func:`summarize` described, in one sentence.

    LOE ranks the items from each landmark's own triplets: it suits files whose ``d + 3`` busiest heads
    hold ``LOE_DESIGN_PER_ITEM`` triplets per item or more. Otherwise LOE-STE (LOE's embedding refined on
    every triplet) or STE fit all of the triplets.
    """
    counts, n, need = s["head_counts"], s["n_items"], d + 3
    if counts.size < need:
        return (f"LOE needs triplets headed by at least d + 3 = {need} items (d = {d}); these have {counts.size:,} "
                "head(s): STE fits them")
    per_item = counts[need - 1] / max(n - 1, 1)
    if per_item >= LOE_DESIGN_PER_ITEM:
        return (f"LOE's design: its d + 3 = {need} busiest heads hold {per_item:,.3g} or more triplets per item each "
                f"({LOE_DESIGN_PER_ITEM} or more suit LOE's own rankings)")
    return (f"Too few triplets for LOE alone: LOE ranks every item from its landmarks' own triplets, and the "
            f"{_ordinal(need)} busiest head (d + 3 = {need} landmarks at the least) has {per_item:,.3g} triplets per "
            f"item, where LOE's rankings need about {LOE_DESIGN_PER_ITEM}; LOE-STE or STE, which fit every triplet, "
            "place these items better")


def _ordinal(k: int) -> str:
    return f"{k}{'th' if 10 <= k % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(k % 10, 'th')}"
