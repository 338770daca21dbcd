"""The explorer's colours: one per point, as '#rrggbb' strings."""

from __future__ import annotations

import numpy as np

from loe_viz.app.colors import position_colors, rgb_to_hex


def test_rgb_to_hex_matches_string_formatting_and_clips():
    rng = np.random.default_rng(0)
    rgb = rng.random((500, 3))
    rgb[:3] = [[0, 0, 0], [1, 1, 1], [1.2, -0.1, 0.5]]
    want = [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in np.rint(np.clip(rgb, 0, 1) * 255).astype(int)]
    got = rgb_to_hex(rgb)
    assert got.dtype == object and got.shape == (500,)
    assert list(got) == want
    assert got[2] == "#ff0080"
    assert rgb_to_hex(rgb.reshape(5, 100, 3)).shape == (5, 100)


def test_position_colors_one_string_per_point():
    X = np.random.default_rng(1).normal(size=(300, 2))
    colors, hue_lightness = position_colors(X)
    assert colors.shape == (300,) and hue_lightness.shape == (300, 2)
    assert all(isinstance(c, str) and len(c) == 7 and c[0] == "#" for c in colors)
    assert len(set(colors)) > 50  # colours follow the positions
