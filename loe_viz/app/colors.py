"""Colours that follow position, so a point keeps its colour in every plot.

The ground truth is centred and seen in its first two principal axes; a point's
hue is its angle in that plane and its lightness falls with its radius (light in
the middle, darker at the rim).  The same colour array is then used for the
ground truth, the recovered embedding and every later plot, so a reader can see
at a glance which part of the configuration went where.

Only numpy is used here: no Panel, HoloViews or bokeh import.
"""

from __future__ import annotations

import numpy as np

__all__ = ["principal_plane", "plane_axes", "project", "position_colors", "hsl_to_rgb", "rgb_to_hex"]


def plane_axes(D: int) -> tuple[str, str]:
    """The axis labels of a plot of :func:`principal_plane`'s plane of ``D``-dimensional points: their own
    coordinates up to 2-D, else which principal axes are drawn (x₁ and x₂ would name the first two coordinates)."""
    return ("x₁", "x₂") if D <= 2 else (f"principal axis 1 of {D}", f"principal axis 2 of {D}")


def principal_plane(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centre and the two leading principal axes of ``X``.

    Parameters
    ----------
    X : ndarray of shape (n, D)

    Returns
    -------
    mean : ndarray of shape (D,)
    basis : ndarray of shape (D, 2)
        Orthonormal columns (the first two right singular vectors of the centred
        data); for ``D == 1`` the second column is zero, for ``D == 2`` the plane
        is the identity so the plot shows the data in its own coordinates.
    """
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    D = X.shape[1]
    basis = np.zeros((D, 2))
    if D == 1:
        basis[0, 0] = 1.0
    elif D == 2:
        basis[:] = np.eye(2)
    else:
        _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
        basis[:] = vt[:2].T
        # deterministic orientation: largest-magnitude entry of each axis positive
        for c in range(2):
            if basis[np.argmax(np.abs(basis[:, c])), c] < 0:
                basis[:, c] *= -1
    return mean, basis


def project(Y: np.ndarray, mean: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Coordinates of ``Y`` (rows in the frame of ``mean``/``basis``) in the plot plane.

    ``Y`` may have fewer columns than ``basis`` has rows (an embedding in fewer
    dimensions than the data): missing columns are taken as zero.
    """
    Y = np.asarray(Y, dtype=np.float64)
    D = basis.shape[0]
    if Y.shape[1] < D:
        Y = np.hstack([Y, np.zeros((Y.shape[0], D - Y.shape[1]))])
    return (Y[:, :D] - mean) @ basis


def hsl_to_rgb(h: np.ndarray, s: np.ndarray | float, l: np.ndarray | float) -> np.ndarray:
    """Vectorised HSL to RGB.

    Parameters
    ----------
    h : ndarray
        Hue in turns, any real (taken modulo 1).
    s, l : ndarray or float
        Saturation and lightness in [0, 1].

    Returns
    -------
    rgb : ndarray of shape h.shape + (3,), values in [0, 1]
    """
    h = np.mod(np.asarray(h, dtype=np.float64), 1.0)
    s = np.broadcast_to(np.asarray(s, dtype=np.float64), h.shape)
    l = np.broadcast_to(np.asarray(l, dtype=np.float64), h.shape)
    a = s * np.minimum(l, 1.0 - l)
    out = np.empty(h.shape + (3,))
    for i, n in enumerate((0.0, 8.0, 4.0)):
        k = np.mod(n + 12.0 * h, 12.0)
        out[..., i] = l - a * np.maximum(-1.0, np.minimum(np.minimum(k - 3.0, 9.0 - k), 1.0))
    return np.clip(out, 0.0, 1.0)


def rgb_to_hex(rgb: np.ndarray) -> np.ndarray:
    """``(..., 3)`` floats in [0, 1] to ``'#rrggbb'`` strings (object array)."""
    ints = np.rint(np.clip(rgb, 0.0, 1.0) * 255).astype(np.int64).reshape(-1, 3)
    # the seven ASCII bytes of each string side by side, read as one '|S7' each
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    chars = np.empty((ints.shape[0], 7), dtype=np.uint8)
    chars[:, 0] = ord("#")
    chars[:, 1::2] = digits[ints >> 4]
    chars[:, 2::2] = digits[ints & 15]
    hexes = chars.view("S7").ravel().astype(str).astype(object)
    return hexes.reshape(rgb.shape[:-1])


def position_colors(X: np.ndarray, *, saturation: float = 0.8) -> tuple[np.ndarray, np.ndarray]:
    """One colour per point: hue by angle, lightness by radius.

    Parameters
    ----------
    X : ndarray of shape (n, D)
        Ground-truth points.
    saturation : float, default 0.8

    Returns
    -------
    hex_colors : object ndarray of shape (n,)
        ``'#rrggbb'`` strings.
    hue_lightness : ndarray of shape (n, 2)
        The hue (turns) and lightness of each point, for binning colours when a
        plot is rasterised.
    """
    mean, basis = principal_plane(X)
    P = project(X, mean, basis)
    angle = np.arctan2(P[:, 1], P[:, 0])
    hue = (angle / (2.0 * np.pi)) % 1.0
    radius = np.hypot(P[:, 0], P[:, 1])
    scale = np.quantile(radius, 0.98) if radius.size else 1.0
    rel = np.clip(radius / (scale if scale > 0 else 1.0), 0.0, 1.0)
    lightness = 0.78 - 0.43 * rel  # 0.78 at the centre, 0.35 at the rim
    rgb = hsl_to_rgb(hue, saturation, lightness)
    return rgb_to_hex(rgb), np.column_stack([hue, lightness])


def quantized(hue_lightness: np.ndarray, n_hue: int = 32, n_light: int = 8,
              saturation: float = 0.8) -> tuple[np.ndarray, list]:
    """Colours as indices into a small palette (hue bins × lightness bins).

    Plotting a numeric index through a colour mapper is much faster than one
    colour string per point (no per-value validation, no categorical ranges),
    and 32 × 8 colours are indistinguishable from the exact ones on screen.

    Returns
    -------
    index : int ndarray of shape (n,)
    palette : list of str
        ``n_hue * n_light`` hex colours; entry ``index[i]`` is point ``i``'s colour.
    """
    h = np.mod(hue_lightness[:, 0], 1.0)
    light = hue_lightness[:, 1]
    lo, hi = 0.35, 0.78
    hb = np.floor(h * n_hue).astype(np.int64) % n_hue
    lb = np.clip(np.floor((light - lo) / (hi - lo + 1e-9) * n_light).astype(np.int64), 0, n_light - 1)
    H, L = np.meshgrid((np.arange(n_hue) + 0.5) / n_hue, lo + (np.arange(n_light) + 0.5) / n_light * (hi - lo),
                       indexing="ij")
    palette = list(rgb_to_hex(hsl_to_rgb(H.ravel(), saturation, L.ravel())))
    return hb * n_light + lb, palette
