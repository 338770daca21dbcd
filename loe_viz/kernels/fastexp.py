"""An exponential that numba inlines and LLVM vectorises.

libm's ``exp`` is a function call per element: a loop that calls it neither
vectorises nor overlaps its memory accesses well. :func:`expneg` is plain
arithmetic (a Cody-Waite reduction and a polynomial) accurate to about one
unit in the last place; kernels that must reproduce libm's results exactly
use it as a first guess and fall back to libm where the guess could matter.
Loops that call it vectorise only when compiled with ``error_model="numpy"``
(no division-by-zero checks). :func:`sigmoid` is the logistic built on it.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import intrinsic

from ._jit import njit


def _bitcast(int_type, float_type, name):
    """An intrinsic that reads an ``int_type`` bit pattern as the IEEE-754 ``float_type`` of the same width."""

    def impl(typingctx, bits):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(float_type))

        return float_type(int_type), codegen

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = f"The {float_type} whose IEEE-754 bit pattern is the {int_type} ``bits``."
    return intrinsic(impl)


f64_from_bits = _bitcast(types.int64, types.float64, "f64_from_bits")
f32_from_bits = _bitcast(types.int32, types.float32, "f32_from_bits")


@njit(nogil=True, cache=True, inline="always")
def expneg32(a):
    """``exp(-a)`` in single precision for float32 ``0 <= a <= 80``, to within 1.1e-7 relative.

    The same reduction as :func:`expneg` with a polynomial of degree 7; in
    float32, eight lanes to an AVX2 register.
    """
    x = -a
    kf = np.floor(x * np.float32(1.4426950408889634) + np.float32(0.5))
    r = x - kf * np.float32(0.693359375)
    r = r - kf * np.float32(-2.12194440e-4)
    p = np.float32(1.0 / 5040.0)
    p = p * r + np.float32(1.0 / 720.0)
    p = p * r + np.float32(1.0 / 120.0)
    p = p * r + np.float32(1.0 / 24.0)
    p = p * r + np.float32(1.0 / 6.0)
    p = p * r + np.float32(0.5)
    p = p * r + np.float32(1.0)
    p = p * r + np.float32(1.0)
    return p * f32_from_bits((np.int32(kf) + np.int32(127)) << np.int32(23))


@njit(nogil=True, cache=True, inline="always")
def expneg(a):
    """``exp(-a)`` for ``0 <= a <= 700`` to within 2.3e-16 relative, in plain arithmetic.

    Unlike libm's ``exp`` (a function call) it inlines and vectorises. Cody-Waite
    reduction ``a = k ln 2 + r``, ``|r| <= ln(2)/2``, and the Taylor polynomial of
    degree 13 (remainder below 5e-18).
    """
    x = -a
    kf = np.floor(x * 1.4426950408889634 + 0.5)
    r = x - kf * 6.93147180369123816490e-01
    r = r - kf * 1.90821492927058770002e-10
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return p * f64_from_bits((np.int64(kf) + 1023) << 52)


@njit(nogil=True, cache=True, inline="always")
def sigmoid(z, cap):
    """``1 / (1 + exp(-z))`` through :func:`expneg`, with ``|z|`` clamped at ``cap`` (at most 700).

    Branch-free, so that a loop calling it vectorises: ``e = exp(-|z|)`` and
    ``1 / (1 + e)`` for ``z >= 0``, ``e / (1 + e)`` below; no cancellation on
    either side. ``1 - sigmoid(z)`` is ``sigmoid(-z)``, to the last bit.
    """
    a = abs(z)
    a = a if a < cap else cap
    e = expneg(a)
    s = np.float64(z >= 0.0)
    return (s + (1.0 - s) * e) / (1.0 + e)
