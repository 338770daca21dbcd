"""The scikit-learn parameter idiom shared by the estimators.

The parameters of an estimator are the arguments of its ``__init__``, read
from the signature (as scikit-learn's ``BaseEstimator._get_param_names``
does): ``__init__`` only stores each argument under its own name (its one
statement ``self._set_params_from(locals())``), and every check happens in
``fit``.

A subclass that adds parameters to its base may write only its own ones and
pass the rest on::

    class TSTE(TripletEmbedding):
        def __init__(self, n_components=2, *, alpha=None, **kwargs):
            super().__init__(n_components, **kwargs)
            self.alpha = alpha

Its ``__init__`` then gets the full signature (the base's arguments, then its
own), so that ``inspect.signature(TSTE)``, ``help`` and ``get_params`` list
every parameter; an argument neither takes is refused by the base's
``__init__`` with the usual ``TypeError``.
"""

from __future__ import annotations

import functools
import inspect
import re

import numpy as np

_SKIP = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _differs(value, default) -> bool:
    if value is default:
        return False
    try:
        return not bool(np.all(value == default)) if np.ndim(value) else bool(value != default)
    except (TypeError, ValueError):
        return True


def _merged_signature(cls, init) -> inspect.Signature | None:
    """``init``'s signature with its ``**kwargs`` replaced by the base ``__init__``'s parameters."""
    own = list(inspect.signature(init).parameters.values())
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in own):
        return None
    base = inspect.signature(super(cls, cls).__init__).parameters.values()
    names = {p.name for p in own}
    positional = [p for p in own if p.kind not in _SKIP and p.kind is not inspect.Parameter.KEYWORD_ONLY]
    inherited = [p for p in base if p.name not in names and p.kind is inspect.Parameter.KEYWORD_ONLY]
    keyword = [p for p in own if p.kind is inspect.Parameter.KEYWORD_ONLY]
    return inspect.Signature(positional + inherited + keyword)


@functools.lru_cache(maxsize=None)
def _fitted_attributes(cls) -> frozenset:
    """The names the "Attributes" sections of ``cls``'s docstrings (its own and its bases') list (read once per class:
    ``getattr(est, "name_", None)`` before a fit reaches ``__getattr__`` on every call)."""
    names = set()
    for klass in cls.__mro__:
        doc = klass.__dict__.get("__doc__") or ""
        part = doc.partition("Attributes\n")[2]
        names |= set(re.findall(r"^\s*(\w+_) :", part, re.M))
    return frozenset(names)


class NotFittedError(AttributeError, ValueError):
    """A fitted attribute (``embedding_``, ``uncertainty_``...) read before ``fit``: an ``AttributeError``, so that
    ``hasattr`` and ``getattr(..., default)`` keep working, and a ``ValueError``, as scikit-learn's."""


class ParamsMixin:
    """``get_params``/``set_params``/``__repr__`` over the arguments of ``__init__``."""

    def __getattr__(self, name: str):
        # Reached only when the normal lookup fails: a fitted attribute (``name_``) before any fit says so, where
        # Python said "'LOE' object has no attribute 'stages_'" for uncertainty_, an attribute the user did not read.
        if (name.endswith("_") and not name.startswith("_") and "embedding_" not in self.__dict__
                and name in _fitted_attributes(type(self))):
            fits = "fit or fit_oracle" if hasattr(type(self), "fit_oracle") else "fit"
            raise NotFittedError(f"{type(self).__name__} is not fitted yet ({name} is set by fitting); call {fits} "
                                 "first")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None:
            merged = _merged_signature(cls, init)
            if merged is not None:
                init.__signature__ = merged

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The parameter names, in the order of the ``__init__`` signature."""
        params = inspect.signature(cls.__init__).parameters.values()
        bad = [p.name for p in params if p.kind in _SKIP]
        if bad:
            raise TypeError(f"{cls.__name__}.__init__ must name its parameters, not take *{bad[0]}")
        return [p.name for p in params if p.name != "self"]

    def _set_params_from(self, arguments: dict) -> None:
        """Store each parameter found in ``arguments`` (``__init__``'s ``locals()``) under its own name.

        Only the names of the signature are read, so a subclass's ``__init__``
        stores its own parameters after its base's call stored the others.
        """
        for name in self._get_param_names():
            if name in arguments:
                setattr(self, name, arguments[name])

    @classmethod
    def _param_defaults(cls) -> dict:
        params = inspect.signature(cls.__init__).parameters
        return {k: params[k].default for k in cls._get_param_names()}

    def get_params(self, deep: bool = True) -> dict:
        """The constructor arguments (scikit-learn idiom).

        Parameters
        ----------
        deep : bool, default True
            Accepted for scikit-learn compatibility; no parameter is itself an
            estimator, so it changes nothing.

        Returns
        -------
        dict
            Parameter name -> value, in signature order.
        """
        return {k: getattr(self, k) for k in self._get_param_names()}

    def set_params(self, **params):
        """Set constructor arguments (scikit-learn idiom); returns ``self``."""
        names = self._get_param_names()
        for k, v in params.items():
            if k not in names:
                raise ValueError(f"{k} is not a parameter of {type(self).__name__}; valid: {', '.join(names)}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        defaults = self._param_defaults()
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if _differs(v, defaults[k]))
        return f"{type(self).__name__}({args})"
