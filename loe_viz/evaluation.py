"""Quality of an embedding without ground truth: held-out triplets and agreement.

Real triplet data comes without the points that generated it, so an embedding
is judged by how many *unseen* comparisons it predicts: fit on part of the
triplets, count the held-out triplets ``(i, j, k)`` with
``||z_i - z_j|| < ||z_i - z_k||`` (ties count half, as in
:func:`loe_viz.metrics.triplet_accuracy`). The same machinery compares
dimensions (:func:`select_dimension`), and :func:`embedding_agreement` measures
how far two methods' embeddings differ.

Estimators follow the scikit-learn idiom used throughout ``loe_viz``:
``fit(triplets, n_items=None)`` sets ``embedding_``; they are cloned with
``type(est)(**est.get_params(deep=False))`` (parameters deep-copied where
possible) or, without ``get_params``, with :func:`copy.deepcopy`, so the
estimator passed in is never fitted or modified.
"""

from __future__ import annotations

import copy
import math
import numbers
import time
from dataclasses import dataclass

import numpy as np

from ._validation import check_int, check_points, check_random_state, check_triplets
from .metrics import triplet_accuracy, unit_frame

__all__ = [
    "clone_estimator",
    "train_test_split_triplets",
    "heldout_accuracy",
    "cross_validate_triplets",
    "embedding_agreement",
    "select_dimension",
    "DimensionSelection",
]


def _as_triplets(triplets, n_items, name="triplets"):
    """Accept an array or a :class:`loe_viz.io.TripletData`; return (T, n_items)."""
    if hasattr(triplets, "triplets") and hasattr(triplets, "n_items") and hasattr(triplets, "labels"):
        if n_items is None:
            n_items = triplets.n_items
        triplets = triplets.triplets
    return check_triplets(triplets, n_items, name=name)


def clone_estimator(estimator, **params):
    """An unfitted copy of ``estimator`` with the same parameters (and ``params`` changed).

    Parameters
    ----------
    estimator : object
        Anything with ``fit(triplets, n_items=None)``.
    **params
        Parameters to override in the copy, e.g. ``n_components=3``.

    Returns
    -------
    object
        ``type(estimator)(**estimator.get_params(deep=False))`` with the
        parameter values copied that are data (arrays, NumPy random states, so a
        Generator is not shared with the original, and the lists, tuples and dicts
        holding them), and estimators among them are cloned; other objects
        (executors, clients, callbacks) are shared, never copied: a copy of a
        process pool closed the pool's own pipes.
        Estimators without ``get_params`` are deep-copied, then given ``params``
        as attributes.
    """
    if isinstance(estimator, type):  # STE, not STE(): its methods are unbound
        raise ValueError(f"estimator must be an instance, such as {estimator.__name__}(), got the class "
                         f"{estimator.__name__}")
    if not callable(getattr(estimator, "fit", None)):
        raise ValueError(
            f"estimator must have a fit(triplets, n_items=None) method, got {type(estimator).__name__}"
        )
    get_params = getattr(estimator, "get_params", None)
    if callable(get_params):
        try:
            current = get_params(deep=False)
        except TypeError:
            current = get_params()
        unknown = set(params) - set(current)
        if unknown:
            raise ValueError(
                f"params {sorted(unknown)} are not parameters of {type(estimator).__name__}; "
                f"valid: {', '.join(current)}"
            )
        current.update(params)
        return type(estimator)(**{k: _copied(v) for k, v in current.items()})
    clone = copy.deepcopy(estimator)
    for attr in [a for a in vars(clone) if a.endswith("_") and not a.startswith("_")]:
        delattr(clone, attr)  # drop fitted attributes such as embedding_
    for k, v in params.items():
        if not hasattr(clone, k):
            raise ValueError(f"params {k!r} is not an attribute of {type(estimator).__name__}")
        setattr(clone, k, v)
    return clone


#: Parameter values that :func:`clone_estimator` copies; it shares any other object.
_DATA = (np.ndarray, np.random.Generator, np.random.RandomState, np.random.SeedSequence, np.random.BitGenerator)


def _copied(value):
    """``value`` copied where it is data (:data:`_DATA`, and containers of it) or an estimator (a clone of it, so that
    a wrapper's inner estimator is not the one fitted), else ``value`` itself."""
    if isinstance(value, _DATA):
        return copy.deepcopy(value)
    if not isinstance(value, type) and callable(getattr(value, "fit", None)) and callable(
            getattr(value, "get_params", None)):
        return clone_estimator(value)
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return type(value)(_copied(v) for v in value)
    return value


def _n_test(test_size, m):
    if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real):
        raise ValueError(f"test_size must be a fraction in (0, 1) or a number of triplets, got {test_size!r}")
    if isinstance(test_size, numbers.Integral) and test_size >= 1:
        k = int(test_size)
    else:
        f = float(test_size)
        if not 0.0 < f < 1.0:
            raise ValueError(f"test_size must be a fraction in (0, 1) or a number of triplets, got {test_size!r}")
        k = int(math.ceil(f * m))
    if m < 2:
        raise ValueError(f"triplets must hold at least 2 rows to split, got {m}")
    if not 1 <= k <= m - 1:
        raise ValueError(f"test_size must leave at least one triplet on each side: {k} of {m} triplets")
    return k


def _split_indices(m, test_size, random_state):
    """Boolean masks of the training and held-out rows: the held-out ones are the first k of a permutation (a mask
    keeps the rows' order without sorting the indices, which took half of the split of 3 * 10^7 triplets)."""
    k = _n_test(test_size, m)
    test = np.zeros(m, dtype=bool)
    test[check_random_state(random_state).permutation(m)[:k]] = True
    return ~test, test


def train_test_split_triplets(triplets, test_size=0.2, random_state=None):
    """Split triplets at random into a training and a held-out part.

    Parameters
    ----------
    triplets : int array-like of shape (m, 3) or TripletData
        List-order triplets.
    test_size : float or int, default 0.2
        Fraction of the triplets held out (rounded up, as scikit-learn does), or
        their number. Both parts are non-empty.
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState

    Returns
    -------
    train, test : ndarrays of shape (m - k, 3) and (k, 3)
        Rows of ``triplets`` in their original order; together every row exactly once.
    """
    T, _ = _as_triplets(triplets, None)
    tr, te = _split_indices(T.shape[0], test_size, random_state)
    return T[tr], T[te]


def _fit_score(estimator, train, test, n_items):
    est = clone_estimator(estimator)
    t0 = time.perf_counter()
    est.fit(train, n_items=n_items)
    fit_time = time.perf_counter() - t0
    Z = getattr(est, "embedding_", None)
    if Z is None:
        raise ValueError(f"estimator {type(estimator).__name__} set no embedding_ in fit")
    Z = check_points(Z, "embedding_")
    if Z.shape[0] != n_items:
        raise ValueError(f"estimator embedding_ has {Z.shape[0]} rows, expected n_items={n_items}")
    return est, Z, fit_time, triplet_accuracy(Z, test), triplet_accuracy(Z, train)


def heldout_accuracy(estimator, triplets, n_items=None, test_size=0.2, random_state=None) -> float:
    """Fraction of held-out triplets satisfied by an embedding fitted on the rest.

    Parameters
    ----------
    estimator : object
        An unfitted or fitted estimator; a clone is fitted, ``estimator`` is left alone.
    triplets : int array-like of shape (m, 3) or TripletData
        List-order triplets.
    n_items : int, optional
        Number of items (default: ``TripletData.n_items`` or the largest index + 1,
        over all triplets, so items seen only in the test part still exist).
    test_size : float or int, default 0.2
        See :func:`train_test_split_triplets`.
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState
        Seed of the split (the estimator keeps its own ``random_state``).

    Returns
    -------
    float in [0, 1]
        0.5 is chance; a noiseless, perfectly embeddable set approaches 1.
    """
    clone_estimator(estimator)  # an argument that is no estimator, before the triplets are looked at
    T, n = _as_triplets(triplets, n_items)
    tr, te = _split_indices(T.shape[0], test_size, random_state)
    return _fit_score(estimator, T[tr], T[te], n)[3]


def _folds(m, n_splits, random_state):
    n_splits = check_int(n_splits, "n_splits", minimum=2)
    if n_splits > m:
        raise ValueError(f"n_splits must be <= the number of triplets ({m}), got {n_splits}")
    perm = check_random_state(random_state).permutation(m)
    return [np.sort(f) for f in np.array_split(perm, n_splits)]


def _unseen_fraction(train, test, n):
    seen = np.zeros(n, dtype=bool)
    seen[train.ravel()] = True
    return float((~seen[test]).any(axis=1).mean())


def cross_validate_triplets(estimator, triplets, n_items=None, n_splits=5, random_state=None) -> dict:
    """K-fold cross-validation of an embedding method on triplets.

    Parameters
    ----------
    estimator : object
        Estimator with ``fit(triplets, n_items=None)`` and ``embedding_``; cloned per fold.
    triplets : int array-like of shape (m, 3) or TripletData
    n_items : int, optional
        Number of items (default: from the data, over all folds).
    n_splits : int, default 5
        Number of folds (>= 2); each triplet is held out exactly once.
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState
        Seed of the fold assignment.

    Returns
    -------
    dict
        ``"test_accuracy"``, ``"train_accuracy"``, ``"fit_time"`` (seconds),
        ``"n_train"``, ``"n_test"`` and ``"unseen_fraction"`` (held-out triplets
        naming an item absent from that fold's training part), each an array of
        length ``n_splits``; plus ``"mean_test_accuracy"`` and
        ``"std_test_accuracy"``.

    Raises
    ------
    ValueError
        For invalid arguments, or when a fold's fit fails (the message names the fold).
    """
    T, n = _as_triplets(triplets, n_items)
    folds = _folds(T.shape[0], n_splits, random_state)
    clone_estimator(estimator)  # an argument that is no estimator is the caller's, not fold 0's, problem
    out = {k: [] for k in ("test_accuracy", "train_accuracy", "fit_time", "n_train", "n_test", "unseen_fraction")}
    all_idx = np.arange(T.shape[0])
    for f, test_idx in enumerate(folds):
        train = T[np.setdiff1d(all_idx, test_idx, assume_unique=True)]
        test = T[test_idx]
        try:
            _, _, fit_time, acc, train_acc = _fit_score(estimator, train, test, n)
        except ValueError as exc:
            raise ValueError(f"fold {f} of {len(folds)}: {exc}") from exc
        out["test_accuracy"].append(acc)
        out["train_accuracy"].append(train_acc)
        out["fit_time"].append(fit_time)
        out["n_train"].append(train.shape[0])
        out["n_test"].append(test.shape[0])
        out["unseen_fraction"].append(_unseen_fraction(train, test, n))
    res = {k: np.asarray(v) for k, v in out.items()}
    res["mean_test_accuracy"] = float(res["test_accuracy"].mean())
    res["std_test_accuracy"] = float(res["test_accuracy"].std(ddof=1)) if len(folds) > 1 else 0.0
    return res


def embedding_agreement(Z1, Z2) -> float:
    """Procrustes disparity between two embeddings of the same items.

    Both are centred and scaled to unit Frobenius norm, then ``Z2`` is rotated
    (or reflected) and scaled onto ``Z1``; the result is the remaining sum of
    squared differences (``scipy.spatial.procrustes``'s disparity). An embedding
    of lower dimension is padded with zero columns.

    Parameters
    ----------
    Z1, Z2 : array-like of shape (n, d1) and (n, d2)

    Returns
    -------
    float in [0, 1]
        0 when the two agree up to similarity transforms; symmetric in its arguments;
        the same at any finite scale of either embedding (coordinates of 1e200 or
        1e-200 included).
    """
    A = check_points(Z1, "Z1")
    B = check_points(Z2, "Z2")
    if A.shape[0] != B.shape[0]:
        raise ValueError(f"Z2 must have as many rows as Z1 ({A.shape[0]}), got {B.shape[0]}")
    d = max(A.shape[1], B.shape[1])
    A = np.hstack([A, np.zeros((A.shape[0], d - A.shape[1]))])
    B = np.hstack([B, np.zeros((B.shape[0], d - B.shape[1]))])
    fa, fb = unit_frame(A), unit_frame(B)  # at any finite scale: no sum of squares overflows or vanishes
    if fa is None:
        raise ValueError("Z1 must contain at least two distinct points")
    if fb is None:
        raise ValueError("Z2 must contain at least two distinct points")
    s = np.linalg.svd(fa[0].T @ fb[0], compute_uv=False)
    return float(min(1.0, max(0.0, 1.0 - s.sum() ** 2)))


def _check_dimension(estimator, T, n: int) -> None:
    """Raise the ``ValueError`` that ``estimator.fit(T, n_items=n)`` raises at its start for its ``n_components``,
    without fitting: the parameter checks of LOE, LOE-STE and the baselines (what their fits check before any
    work); nothing for other estimators, whose fits check themselves."""
    from .baselines import TripletEmbedding, check_dimension_fits
    from .loe import LOE
    from .loeste import LOESTE

    if isinstance(estimator, LOESTE):  # its start's landmarks (from the heads of T), then LOE's own checks
        estimator = estimator._build(None, (T, n, False))[3]
    if isinstance(estimator, LOE):
        estimator._validated(n, auto_selection="random", draw=False)  # as LOE.fit on stored triplets
    elif isinstance(estimator, TripletEmbedding):
        check_dimension_fits(estimator._validated(draw=False).d, n)  # TripletEmbedding.fit's check, before its start


@dataclass(frozen=True)
class DimensionSelection:
    """Held-out triplet error versus embedding dimension (see :func:`select_dimension`).

    Attributes
    ----------
    dims : ndarray (k,)
        Dimensions tried, increasing.
    errors : ndarray (k, n_splits)
        Held-out error (1 - accuracy) of every dimension on every fold; the folds
        are the same for every dimension.
    mean_error, sem : ndarray (k,)
        Mean over folds and its standard error.
    train_error : ndarray (k,)
        Mean training error (falls with the dimension; the gap to ``mean_error``
        shows over-fitting).
    fit_time : ndarray (k,)
        Mean seconds per fit.
    best_dim : int
        The chosen dimension.
    rule : str
        ``"one-se"`` or ``"min"``.
    """

    dims: np.ndarray
    errors: np.ndarray
    mean_error: np.ndarray
    sem: np.ndarray
    train_error: np.ndarray
    fit_time: np.ndarray
    best_dim: int
    rule: str

    def as_dict(self) -> dict:
        """Plain lists, e.g. for JSON."""
        return {
            "dims": self.dims.tolist(), "mean_error": self.mean_error.tolist(), "sem": self.sem.tolist(),
            "train_error": self.train_error.tolist(), "fit_time": self.fit_time.tolist(),
            "errors": self.errors.tolist(), "best_dim": self.best_dim, "rule": self.rule,
        }


def select_dimension(estimator_factory, triplets, dims=(1, 2, 3, 4, 5), n_items=None, n_splits=3,
                     random_state=None, rule="one-se") -> DimensionSelection:
    """Held-out triplet error versus ``n_components``, and the dimension to use.

    Every dimension is cross-validated on the same folds. Higher dimensions
    always fit the training triplets better; the held-out error stops falling at
    the dimension the data supports. The ``"one-se"`` rule picks the smallest
    dimension whose mean error is within one standard error of the best mean
    (the usual guard against chasing noise); ``"min"`` picks the best mean.

    Parameters
    ----------
    estimator_factory : callable, estimator class or estimator
        ``estimator_factory(d)`` returns an unfitted estimator embedding in ``d``
        dimensions (e.g. ``lambda d: LOE(n_components=d, n_landmarks=d + 5)``); a class
        such as ``STE`` is called as ``STE(n_components=d)``; an estimator with an
        ``n_components`` parameter is cloned per dimension. An estimator that
        embeds in another dimension than it is given is refused.
    triplets : int array-like of shape (m, 3) or TripletData
    dims : sequence of int, default (1, 2, 3, 4, 5)
    n_items : int, optional
    n_splits : int, default 3
    random_state : None, int, SeedSequence, numpy.random.Generator or RandomState
        Seed of the folds.
    rule : {"one-se", "min"}, default "one-se"

    Returns
    -------
    DimensionSelection

    Raises
    ------
    ValueError
        For invalid arguments; when a fit fails (the message names the
        dimension and the fold); and, before any fit, when the estimator for a
        dimension of ``dims`` refuses it, with the estimator's own message
        (e.g. ``n_components=8 is more than the data allow: 8 items span at
        most 7 dimensions``): the checks LOE, LOE-STE and the baselines make at
        the start of their fit run for every dimension first. Other estimators
        are checked by their fits.
    """
    if rule not in ("one-se", "min"):
        raise ValueError(f"rule must be 'one-se' or 'min', got {rule!r}")
    try:
        dims = sorted({check_int(d, "dims", minimum=1) for d in dims})
    except TypeError:
        raise ValueError(f"dims must be a sequence of positive integers, got {dims!r}") from None
    if not dims:
        raise ValueError("dims must name at least one dimension")
    if isinstance(estimator_factory, type):  # a class is a factory: STE(n_components=d)
        cls = estimator_factory

        def make(d):
            return cls(n_components=d)
    elif callable(getattr(estimator_factory, "fit", None)):
        base = estimator_factory

        def make(d):
            return clone_estimator(base, n_components=d)
    elif callable(estimator_factory):
        make = estimator_factory
    else:
        raise ValueError(
            f"estimator_factory must be a callable d -> estimator or an estimator, got {type(estimator_factory).__name__}"
        )
    T, n = _as_triplets(triplets, n_items)
    folds = _folds(T.shape[0], n_splits, random_state)
    # Every dimension's estimator, checked before any fit: a dimension the data or the estimator cannot take
    # was found only after the fits of every smaller one (minutes of them at 10^6 triplets).
    estimators = [make(d) for d in dims]
    for d, est in zip(dims, estimators):
        if not callable(getattr(est, "fit", None)):
            raise ValueError(f"estimator_factory({d}) returned {type(est).__name__}, not an estimator with a "
                             "fit(triplets, n_items=None) method")
        given = getattr(est, "n_components", d)
        if given != d:  # every row of the result would be a fit in another dimension than it says
            raise ValueError(f"estimator_factory({d}) returned an estimator with n_components={given!r}; it must "
                             "embed in the dimension it is given")
        try:
            _check_dimension(clone_estimator(est), T, n)  # a clone: the checks may draw from a random_state
        except ValueError as exc:
            message = str(exc)
            raise ValueError(message if message.startswith(f"n_components={d} ") else
                             f"n_components={d}: {message}") from exc
    all_idx = np.arange(T.shape[0])
    errors = np.empty((len(dims), len(folds)))
    train_err = np.empty((len(dims), len(folds)))
    times = np.empty((len(dims), len(folds)))
    for a, (d, est) in enumerate(zip(dims, estimators)):
        for f, test_idx in enumerate(folds):
            train = T[np.setdiff1d(all_idx, test_idx, assume_unique=True)]
            try:
                _, Z, t, acc, tr_acc = _fit_score(est, train, T[test_idx], n)
            except ValueError as exc:
                raise ValueError(f"n_components={d}, fold {f}: {exc}") from exc
            if Z.shape[1] != d:  # an estimator without n_components that embeds in a dimension of its own
                raise ValueError(f"estimator_factory({d}) returned an estimator whose embedding_ has {Z.shape[1]} "
                                 "columns; it must embed in the dimension it is given")
            errors[a, f] = 1.0 - acc
            train_err[a, f] = 1.0 - tr_acc
            times[a, f] = t
    mean = errors.mean(axis=1)
    sem = errors.std(axis=1, ddof=1) / np.sqrt(len(folds))
    best = int(np.argmin(mean))
    if rule == "one-se":
        threshold = mean[best] + sem[best]
        best = int(np.flatnonzero(mean <= threshold + 1e-12)[0])
    return DimensionSelection(
        dims=np.asarray(dims), errors=errors, mean_error=mean, sem=sem, train_error=train_err.mean(axis=1),
        fit_time=times.mean(axis=1), best_dim=int(dims[best]), rule=rule,
    )
