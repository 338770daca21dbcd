"""Numba kernels behind :mod:`loe_viz.io`: integer-table parsing and formatting.

The reader's fast path hands raw bytes of a delimited text table whose item
columns are plain decimal integers to :func:`parse_int_table`, which writes
list-order triplets straight into a pre-allocated ``int32`` array. The kernel
never raises: on anything it does not understand it stops and reports the line,
and the Python driver re-reads that one line to word a precise error (or falls
back to its general, slower reader).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Column roles (index into the per-row value buffer).
ROLE_SKIP = 0
ROLE_HEAD = 1
ROLE_NEAR = 2
ROLE_FAR = 3
ROLE_LEFT = 4
ROLE_RIGHT = 5
ROLE_ANSWER = 6
ROLE_RESPONSE = 7

# Row modes.
MODE_LIST = 0  # head, near, far
MODE_LABEL = 1  # head, left, right, answer = label of the chosen item
MODE_INDEX = 2  # head, left, right, answer = 0 (left) or 1 (right)
MODE_RESPONSE = 3  # head, near, far, y in {1} (as is) or {0, -1} (swapped)

# Problems reported in info[I_STATUS].
OK = 0
BAD_SYNTAX = 1  # anything else: let Python word it
BAD_REPEAT = 2
BAD_ANSWER = 3
BAD_RANGE = 4

# Slots of the ``info`` array shared between calls.
I_ROW = 0  # next output row (in/out)
I_LINES = 1  # physical lines consumed so far (in/out)
I_STATUS = 2
I_BAD_LINE = 3  # line (0-based, absolute over calls) of the problem
I_BAD_START = 4  # byte offset of that line in the current buffer
I_CONSUMED = 5  # bytes of the buffer consumed by this call
I_MAX = 6  # largest item value seen (in/out)
I_SKIPPED = 7  # rows skipped (in/out)
I_MINUS = 8  # 1 once a response of -1 was seen (in/out)
I_AFAILS = 9  # crowd rows whose answer names neither item (dropped, counted; in/out)
N_INFO = 10

_CAP = 10**15  # digits beyond this are counted but not accumulated (no overflow)


@njit(nogil=True, cache=True)
def parse_int_table(buf, stop, final, delim, roles, mode, limit, skip_bad, out, info, skipped_lines, answer_lines):
    """Parse whole lines of ``buf[:stop]`` into list-order rows of ``out``.

    Parameters
    ----------
    buf : uint8 array
        Raw bytes (ASCII-compatible encoding, no byte-order mark).
    stop : int
        Number of valid bytes in ``buf``.
    final : bool
        Whether ``buf[:stop]`` ends the file (a last line without a newline is then parsed).
    delim : int
        Field separator byte; 32 means "runs of spaces or tabs".
    roles : int8 array
        Role of every column (``ROLE_*``); the row must have exactly ``len(roles)`` fields.
    mode : int
        ``MODE_*``: how the roles combine into a list-order row.
    limit : int
        Item values must be ``< limit``.
    skip_bad : bool
        Skip rows with a repeated item (counting them) instead of stopping.
    out : int32 array of shape (capacity, 3)
        Output rows, written from ``info[I_ROW]``.
    info : int64 array of length ``N_INFO``
        State carried between calls (see the ``I_*`` slots).
    skipped_lines : int64 array
        The first skipped lines (0-based) are recorded here.
    answer_lines : int64 array
        The first lines whose answer names neither item. Such rows are always dropped
        and counted in ``info[I_AFAILS]`` (the caller decides the answer encoding
        of the whole file, then raises or skips).

    Notes
    -----
    Stops at the first line it cannot handle with ``info[I_STATUS] != OK``; the
    line is ``info[I_BAD_LINE]`` and starts at ``buf[info[I_BAD_START]]``.
    Otherwise consumes every complete line (``info[I_CONSUMED]`` bytes); the rest
    must be carried over to the next call.
    """
    ncols = roles.shape[0]
    vals = np.zeros(8, np.int64)
    row = info[I_ROW]
    lines = info[I_LINES]
    maxv = info[I_MAX]
    nskip = info[I_SKIPPED]
    cap = out.shape[0]
    info[I_STATUS] = OK
    ws = delim == 32
    pos = 0
    while pos < stop:
        start = pos
        p = start
        # Leading blanks (a leading tab is an empty field in a tab-separated file).
        while p < stop and (buf[p] == 32 or (buf[p] == 9 and delim != 9)):
            p += 1
        if p < stop and buf[p] == 13 and p + 1 < stop and buf[p + 1] == 10:
            p += 1
        if p == stop:
            if final:
                lines += 1
                pos = stop
            break
        if buf[p] == 10:  # blank line
            pos = p + 1
            lines += 1
            continue
        if buf[p] == 35:  # '#' comment
            while p < stop and buf[p] != 10:
                p += 1
            if p == stop and not final:
                break
            pos = p + 1
            lines += 1
            continue
        status = OK
        col = 0
        incomplete = False
        while True:
            if col >= ncols:
                status = BAD_SYNTAX  # too many fields
                break
            r = roles[col]
            if r == ROLE_SKIP:
                while p < stop:
                    c = buf[p]
                    if c == 10 or c == 13 or c == 34:
                        break
                    if ws:
                        if c == 32 or c == 9:
                            break
                    elif c == delim:
                        break
                    p += 1
            else:
                neg = False
                if p < stop and buf[p] == 45:
                    if r != ROLE_RESPONSE:
                        status = BAD_SYNTAX  # negative index
                        break
                    neg = True
                    p += 1
                elif p < stop and buf[p] == 43:
                    p += 1
                v = np.int64(0)
                nd = 0
                while p < stop:
                    c = buf[p]
                    if c < 48 or c > 57:
                        break
                    if v < _CAP:
                        v = v * 10 + (c - 48)
                    nd += 1
                    p += 1
                if p == stop and not final:
                    incomplete = True
                    break
                if nd == 0:
                    status = BAD_SYNTAX  # empty or non-numeric field
                    break
                if neg:
                    v = -v
                elif r != ROLE_RESPONSE and v >= limit:
                    status = BAD_RANGE
                    break
                vals[r] = v
            # Separator or end of line.
            q = p
            while p < stop and (buf[p] == 32 or (buf[p] == 9 and delim != 9)):
                p += 1
            col += 1
            if p == stop:
                if not final:
                    incomplete = True
                break
            c = buf[p]
            if c == 10:
                break
            if c == 13:
                if p + 1 < stop and buf[p + 1] == 10:
                    p += 1
                    break
                if p + 1 == stop and not final:
                    incomplete = True
                    break
                status = BAD_SYNTAX  # a lone carriage return
                break
            if ws:
                if p == q:
                    status = BAD_SYNTAX  # e.g. "12abc"
                    break
            else:
                if c != delim:
                    status = BAD_SYNTAX
                    break
                p += 1
        if incomplete:
            break
        if status == OK and col != ncols:
            status = BAD_SYNTAX  # too few fields
        if status == OK:
            h = vals[ROLE_HEAD]
            if mode == MODE_LIST:
                a = vals[ROLE_NEAR]
                b = vals[ROLE_FAR]
            elif mode == MODE_RESPONSE:
                y = vals[ROLE_RESPONSE]
                if y == 1:
                    a = vals[ROLE_NEAR]
                    b = vals[ROLE_FAR]
                elif y == 0 or y == -1:
                    a = vals[ROLE_FAR]
                    b = vals[ROLE_NEAR]
                    if y == -1:
                        info[I_MINUS] = 1
                else:
                    status = BAD_SYNTAX
                    a = 0
                    b = 0
            else:
                left = vals[ROLE_LEFT]
                right = vals[ROLE_RIGHT]
                ans = vals[ROLE_ANSWER]
                a = left
                b = right
                if h != left and h != right and left != right:
                    if mode == MODE_LABEL:
                        if ans == right:
                            a = right
                            b = left
                        elif ans != left:
                            status = BAD_ANSWER
                    else:
                        if ans == 1:
                            a = right
                            b = left
                        elif ans != 0:
                            status = BAD_ANSWER
            if status == OK and (h == a or h == b or a == b):
                status = BAD_REPEAT
            if status == OK:
                if row >= cap:
                    status = BAD_SYNTAX  # cannot happen with an exact line count
                else:
                    out[row, 0] = h
                    out[row, 1] = a
                    out[row, 2] = b
                    row += 1
                    if h > maxv:
                        maxv = h
                    if a > maxv:
                        maxv = a
                    if b > maxv:
                        maxv = b
            elif status == BAD_ANSWER:
                if info[I_AFAILS] < answer_lines.shape[0]:
                    answer_lines[info[I_AFAILS]] = lines
                info[I_AFAILS] += 1
                status = OK
            elif skip_bad and status == BAD_REPEAT:
                if nskip < skipped_lines.shape[0]:
                    skipped_lines[nskip] = lines
                nskip += 1
                status = OK
        if status != OK:
            info[I_STATUS] = status
            info[I_BAD_LINE] = lines
            info[I_BAD_START] = start
            info[I_CONSUMED] = start
            info[I_ROW] = row
            info[I_LINES] = lines
            info[I_MAX] = maxv
            info[I_SKIPPED] = nskip
            return
        pos = p + 1
        lines += 1
    info[I_CONSUMED] = min(pos, stop)
    info[I_ROW] = row
    info[I_LINES] = lines
    info[I_MAX] = maxv
    info[I_SKIPPED] = nskip


@njit(nogil=True, cache=True)
def mark_present(values, present):
    """Set ``present[v] = True`` for every entry ``v`` of the 2-D array ``values``."""
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            present[values[i, j]] = True


@njit(nogil=True, cache=True)
def remap_inplace(values, table):
    """Replace every entry ``v`` of the 2-D array ``values`` by ``table[v]``."""
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            values[i, j] = table[values[i, j]]


@njit(nogil=True, cache=True)
def first_row_with(values, table):
    """Index of the first row holding an entry ``v`` with ``table[v] < 0`` (or -1)."""
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            if table[values[i, j]] < 0:
                return i
    return -1


@njit(nogil=True, cache=True)
def format_int_rows(values, delim, out):
    """Write the rows of the int64 array ``values`` as delimited text into ``out``.

    ``out`` must hold at least ``values.size * 21`` bytes. Returns the number of
    bytes written (every row ends with ``\\n``).
    """
    tmp = np.empty(20, np.uint8)
    p = 0
    m, k = values.shape
    for i in range(m):
        for j in range(k):
            v = values[i, j]
            if v < 0:
                out[p] = 45
                p += 1
                v = -v
            nd = 0
            if v == 0:
                tmp[0] = 48
                nd = 1
            while v > 0:
                tmp[nd] = 48 + v % 10
                v //= 10
                nd += 1
            for t in range(nd - 1, -1, -1):
                out[p] = tmp[t]
                p += 1
            out[p] = delim if j < k - 1 else 10
            p += 1
    return p


@njit(nogil=True, cache=True)
def split_fields(buf, stop, final, delim, ncols, starts, ends, line_of, info):
    """Find the fields of whole lines of ``buf[:stop]`` (a table of text labels).

    Writes, for every data row, the byte range ``[starts[r, c], ends[r, c])`` of
    each field (surrounding spaces and tabs trimmed) and its 0-based line in
    ``line_of[r]``; blank lines and ``#`` comments are skipped. Uses the ``I_ROW``,
    ``I_LINES``, ``I_STATUS``, ``I_BAD_LINE``, ``I_BAD_START`` and ``I_CONSUMED``
    slots of ``info`` like :func:`parse_int_table`, and stops with
    ``BAD_SYNTAX`` on a quote, a lone carriage return or a wrong number of fields.
    """
    ws = delim == 32
    row = info[I_ROW]
    lines = info[I_LINES]
    cap = starts.shape[0]
    info[I_STATUS] = OK
    pos = 0
    while pos < stop:
        start = pos
        p = start
        while p < stop and (buf[p] == 32 or (buf[p] == 9 and delim != 9)):
            p += 1
        if p < stop and buf[p] == 13 and p + 1 < stop and buf[p + 1] == 10:
            p += 1
        if p == stop:
            if final:
                lines += 1
                pos = stop
            break
        if buf[p] == 10:
            pos = p + 1
            lines += 1
            continue
        if buf[p] == 35:
            while p < stop and buf[p] != 10:
                p += 1
            if p == stop and not final:
                break
            pos = p + 1
            lines += 1
            continue
        status = OK
        col = 0
        incomplete = False
        p = start
        while True:
            while p < stop and (buf[p] == 32 or (buf[p] == 9 and delim != 9)):
                p += 1
            fs = p
            while p < stop:
                c = buf[p]
                if c == 10 or c == 13 or c == 34:
                    break
                if ws:
                    if c == 32 or c == 9:
                        break
                elif c == delim:
                    break
                p += 1
            if p == stop and not final:
                incomplete = True
                break
            if p < stop and buf[p] == 34:
                status = BAD_SYNTAX  # quoted fields: the csv reader's job
                break
            fe = p
            while fe > fs and (buf[fe - 1] == 32 or (buf[fe - 1] == 9 and delim != 9)):
                fe -= 1
            if col >= ncols or row >= cap:
                status = BAD_SYNTAX  # too many fields
                break
            starts[row, col] = fs
            ends[row, col] = fe
            col += 1
            if ws:
                while p < stop and (buf[p] == 32 or buf[p] == 9):
                    p += 1
            if p == stop:
                if not final:
                    incomplete = True
                break
            c = buf[p]
            if c == 10:
                break
            if c == 13:
                if p + 1 < stop and buf[p + 1] == 10:
                    p += 1
                    break
                if p + 1 == stop and not final:
                    incomplete = True
                    break
                status = BAD_SYNTAX  # a lone carriage return
                break
            if not ws:
                p += 1  # the delimiter
        if incomplete:
            break
        if status == OK and col != ncols:
            status = BAD_SYNTAX
        if status != OK:
            info[I_STATUS] = status
            info[I_BAD_LINE] = lines
            info[I_BAD_START] = start
            info[I_CONSUMED] = start
            info[I_ROW] = row
            info[I_LINES] = lines
            return
        line_of[row] = lines
        row += 1
        pos = p + 1
        lines += 1
    info[I_CONSUMED] = min(pos, stop)
    info[I_ROW] = row
    info[I_LINES] = lines


_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(nogil=True, cache=True)
def hash_fields(buf, starts, ends, cols, out):
    """64-bit FNV-1a hash of the bytes of fields ``cols`` of every row into ``out``."""
    for r in range(starts.shape[0]):
        for j in range(cols.shape[0]):
            c = cols[j]
            h = _FNV_OFFSET
            for p in range(starts[r, c], ends[r, c]):
                h = (h ^ np.uint64(buf[p])) * _FNV_PRIME
            out[r, j] = h


@njit(nogil=True, cache=True)
def same_as_representative(buf, starts, ends, cols, inv, rep_start, rep_end):
    """Whether every field has exactly the bytes of its hash class's representative
    (i.e. the 64-bit hashes had no collision)."""
    for r in range(starts.shape[0]):
        for j in range(cols.shape[0]):
            c = cols[j]
            u = inv[r, j]
            s = starts[r, c]
            e = ends[r, c]
            rs = rep_start[u]
            if e - s != rep_end[u] - rs:
                return False
            for t in range(e - s):
                if buf[s + t] != buf[rs + t]:
                    return False
    return True


@njit(nogil=True, cache=True)
def unique_hashes(h, inv, first):
    """Group equal values of the uint64 array ``h`` (open-addressing hash table).

    Writes ``inv[i]``, the group of ``h[i]`` (groups numbered in order of first
    appearance), and ``first[g]``, the first index of group ``g``; returns the
    number of groups. O(len(h)), unlike sorting.
    """
    n = h.shape[0]
    size = 1 << 10
    keys = np.zeros(size, np.uint64)
    vals = np.full(size, -1, np.int64)
    nu = 0
    for i in range(n):
        if 2 * (nu + 1) > size:
            size <<= 1
            keys = np.zeros(size, np.uint64)
            vals = np.full(size, -1, np.int64)
            mask = np.uint64(size - 1)
            for g in range(nu):
                key = h[first[g]]
                s = np.int64((key ^ (key >> np.uint64(31))) & mask)
                while vals[s] != -1:
                    s = (s + 1) & (size - 1)
                keys[s] = key
                vals[s] = g
        key = h[i]
        s = np.int64((key ^ (key >> np.uint64(31))) & np.uint64(size - 1))
        while vals[s] != -1 and keys[s] != key:
            s = (s + 1) & (size - 1)
        if vals[s] == -1:
            keys[s] = key
            vals[s] = nu
            first[nu] = i
            nu += 1
        inv[i] = vals[s]
    return nu
