"""The explorer's error measures: one definition and one evaluation sample everywhere.

The status line, the Embedding step, Compare and the sweeps all score an embedding
with :func:`scores`, so one embedding shows one triplet error wherever it appears.
No Panel here.
"""

from __future__ import annotations

import numpy as np

__all__ = ["TRIPLET_TEST", "scores", "procrustes", "triplet_error"]

#: Number of uniformly random noiseless triplets of the ground truth on which the
#: triplet error is measured.
TRIPLET_TEST = 10_000


def _padded(Z: np.ndarray, D: int) -> np.ndarray:
    Z = np.asarray(Z, dtype=np.float64)
    if Z.shape[1] >= D:
        return Z
    return np.hstack([Z, np.zeros((Z.shape[0], D - Z.shape[1]))])


def procrustes(X: np.ndarray, Z: np.ndarray) -> float:
    """Procrustes error of ``Z`` against the truth ``X`` (``Z`` padded with zero columns to X's dimension)."""
    from .. import metrics as M

    return float(M.procrustes_error(X, _padded(Z, X.shape[1])))


def triplet_error(X: np.ndarray, Z: np.ndarray, seed: int) -> float:
    """Fraction of :data:`TRIPLET_TEST` random noiseless triplets of ``X`` that ``Z`` gets wrong.

    The test triplets are drawn with ``random_state=seed`` (the configuration's seed), so
    two embeddings of one configuration are scored on the same triplets.
    """
    from .. import metrics as M

    return float(M.triplet_error(X, np.asarray(Z, dtype=np.float64), n_test=TRIPLET_TEST, random_state=int(seed)))


def scores(X: np.ndarray, Z: np.ndarray, seed: int) -> tuple[float, float]:
    """``(Procrustes error, triplet error)`` of the embedding ``Z`` of the truth ``X``."""
    return procrustes(X, Z), triplet_error(X, Z, seed)
