"""The method registry: one entry per public estimator, read by the app and the benchmarks."""

import numpy as np
import pytest

import loe_viz as lv
from loe_viz.methods import BASELINES, METHODS, get_method, method_colour


def test_registry_lists_every_estimator_once_with_its_class():
    assert list(METHODS) == ["LOE", "STE", "LOESTE", "TSTE", "SOE", "GNMDS", "CKL"]
    for name, m in METHODS.items():
        assert m.estimator is getattr(lv, name)
        assert m.estimator.__name__ == name
    assert BASELINES == ("STE", "TSTE", "SOE", "GNMDS", "CKL")
    assert [k for k, m in METHODS.items() if m.landmark_triplets] == ["LOE", "LOESTE"]


def test_labels_and_colours_are_distinct():
    labels = [m.label for m in METHODS.values()]
    colours = [m.colour for m in METHODS.values()]
    assert len(set(labels)) == len(labels) and len(set(colours)) == len(colours)
    # and each its own dash and marker, valid for Bokeh: curves are told apart without colour
    from bokeh.core.enums import MarkerType
    from bokeh.core.properties import DashPattern
    dashes, markers = [m.dash for m in METHODS.values()], [m.marker for m in METHODS.values()]
    assert len(set(dashes)) == len(dashes) and len(set(markers)) == len(markers)
    assert all(DashPattern().is_valid(d) for d in dashes) and set(markers) <= set(MarkerType)
    assert all(c.startswith("#") and len(c) == 7 for c in colours)


def test_lookup_by_name_or_label():
    assert get_method("t-STE") is METHODS["TSTE"]
    assert get_method("LOE-STE") is METHODS["LOESTE"]
    assert method_colour("LOE-STE") == METHODS["LOESTE"].colour
    assert method_colour("cblearn STE", default="#123456") == "#123456"
    with pytest.raises(ValueError, match=r"^method must be one of LOE, STE, LOESTE, TSTE, SOE, GNMDS, CKL, got 'tSNE'$"):
        get_method("tSNE")


def test_a_method_builds_its_estimator():
    est = METHODS["SOE"](n_components=3, margin=0.5)
    assert isinstance(est, lv.SOE) and est.n_components == 3 and est.margin == 0.5


def test_app_and_benchmarks_read_the_registry():
    from loe_viz.app import triplets_state

    assert triplets_state.TRIPLET_METHODS == tuple(METHODS)
    assert triplets_state.METHOD_LABELS["TSTE"] == "t-STE"


def test_unranked_items_is_the_union_over_landmarks():
    X = lv.make_points("gaussian", 30, random_state=0)
    rng = np.random.default_rng(1)
    heads = np.arange(5)
    rows = []
    for h in heads:  # items 25..29 are never compared by landmark 0, item 29 by none
        others = np.setdiff1d(np.arange(30), [h, 29] + ([25, 26, 27, 28] if h == 0 else []))
        for _ in range(400):
            j, k = rng.choice(others, 2, replace=False)
            rows.append((h, j, k) if np.sum((X[h] - X[j]) ** 2) < np.sum((X[h] - X[k]) ** 2) else (h, k, j))
    with pytest.warns(lv.LOEWarning, match=r"^5 item\(s\) took part in no comparison of at least one landmark \(e\.g\. "
                      r"\[25, 26, 27, 28, 29\]\): 9 of the 145 item-landmark distances \(6\.21 %\) are unknown and set "
                      r"to their landmark's mean distance$"):
        model = lv.LOE(landmarks=heads, refine=None, random_state=2).fit(np.array(rows), n_items=30)
    np.testing.assert_array_equal(model.stages_.ranking.unranked_items, [25, 26, 27, 28, 29])
