"""Per-landmark tasks of :class:`loe_viz.LOE`, picklable for any ``concurrent.futures`` executor.

A task ranks one landmark. With stored triplets it first pulls that landmark's
share out of them: a thread shares the caller's array (in memory or
memory-mapped), and a task sent to another process re-opens the ``.npy`` file
the array was memory-mapped from, so only a small handle travels.
"""

from __future__ import annotations

import mmap

import numpy as np

from ._validation import index_dtype
from .kernels import shares
from .ranking import cache_order, rank_column

__all__ = ["StoredTriplets", "landmark_share", "rank_share"]


class StoredTriplets:
    """A picklable handle to list-order triplets memory-mapped from a file.

    Parameters
    ----------
    filename : str
    offset : int
        Byte offset of the array in the file.
    shape : tuple of int
    dtype : numpy dtype

    Notes
    -----
    Remote workers must see the same file at the same path (a shared or local
    file system).
    """

    def __init__(self, filename, offset: int, shape, dtype):
        self.filename = str(filename)
        self.offset = int(offset)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @classmethod
    def from_array(cls, original, validated: np.ndarray) -> "StoredTriplets | None":
        """The handle of ``original`` when ``validated`` is exactly its file-backed memory, else None.

        Only a memory map made directly from a file (e.g. ``np.load(path,
        mmap_mode="r")``), not a view of one, has a trustworthy offset.
        """
        if not isinstance(original, np.memmap) or not isinstance(original.base, mmap.mmap):
            return None
        if original.filename is None or not original.flags.c_contiguous:
            return None
        if validated.dtype != original.dtype or validated.shape != original.shape:
            return None
        if validated.ctypes.data != original.ctypes.data:
            return None
        return cls(original.filename, original.offset, original.shape, original.dtype)

    def open(self) -> np.ndarray:
        """The triplets, memory-mapped read-only."""
        return np.memmap(self.filename, dtype=self.dtype, mode="r", offset=self.offset, shape=self.shape)

    def __repr__(self) -> str:
        return f"StoredTriplets({self.filename!r}, offset={self.offset}, shape={self.shape}, dtype={self.dtype})"


def landmark_share(triplets: np.ndarray, head: int, count: int, n_items: int):
    """``(near, far)`` of the triplets headed by ``head``, in row order.

    Parameters
    ----------
    triplets : int ndarray (m, 3)
        List-order triplets (validated).
    head : int
    count : int
        Number of triplets headed by ``head`` (from a previous count).
    n_items : int

    Returns
    -------
    near, far : int ndarrays (count,), int32 when ``n_items`` allows.
    """
    dt = index_dtype(n_items)
    near = np.empty(count, dtype=dt)
    far = np.empty(count, dtype=dt)
    got = shares.landmark_share(triplets, head, near, far)
    if got != count:
        raise RuntimeError(f"landmark {head}: expected {count} triplets in the stored triplets, found {got}")
    return near, far


def rank_share(source, head: int, count: int, n_items: int, rank_kw: dict):
    """Executor task: pull landmark ``head``'s share out of the stored triplets and rank it.

    Parameters
    ----------
    source : ndarray or StoredTriplets
        The validated triplets, or a handle that re-opens them from their file.
    head, count, n_items : int
    rank_kw : dict
        Keyword arguments of :func:`loe_viz.ranking.rank_column`.

    Returns
    -------
    ColumnRanking
    """
    triplets = source.open() if isinstance(source, StoredTriplets) else source
    near, far = landmark_share(triplets, int(head), int(count), int(n_items))
    del triplets
    near, far = cache_order(near, far, int(n_items))  # the share in arrival order is freed here
    return rank_column(near, far, int(head), int(n_items), reorder=False, **rank_kw)
