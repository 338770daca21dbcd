"""The scikit-learn parameter idiom shared by the estimators."""

from __future__ import annotations

import numpy as np


def _differs(value, default) -> bool:
    if value is default:
        return False
    try:
        return not bool(np.all(value == default)) if np.ndim(value) else bool(value != default)
    except (TypeError, ValueError):
        return True


class ParamsMixin:
    """``get_params``/``set_params``/``__repr__`` over the names in ``_param_names``."""

    _param_names: tuple = ()

    def get_params(self, deep: bool = True) -> dict:
        """The constructor arguments (scikit-learn idiom)."""
        return {k: getattr(self, k) for k in self._param_names}

    def set_params(self, **params):
        """Set constructor arguments (scikit-learn idiom)."""
        for k, v in params.items():
            if k not in self._param_names:
                raise ValueError(
                    f"{k} is not a parameter of {type(self).__name__}; valid: {', '.join(self._param_names)}"
                )
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        defaults = type(self)().get_params()
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if _differs(v, defaults[k]))
        return f"{type(self).__name__}({args})"
