"""loe_viz.describe.summarize: how a triplet file was read, in numbers and words."""

import io

import numpy as np

from loe_viz.describe import summarize
from loe_viz.io import read_triplets


def test_counts_heads_and_unused_items():
    data = read_triplets(io.StringIO("0,1,2\n0,2,3\n4,1,2\n"), n_items=7)
    sm = summarize(data)
    assert (sm["n_items"], sm["n_triplets"], sm["n_heads"]) == (7, 3, 2)
    assert sm["per_head"] == {"min": 1, "median": 1.5, "mean": 1.5, "max": 2, "q10": 1.1, "q90": 1.9}
    assert sm["head_counts"].tolist() == [2, 1]
    assert sm["unused_items"] == 2 and sm["labels"] == "none" and sm["label_examples"] == []
    assert sm["sentence"] == ("Read 3 triplets over 7 items from <buffer> (list-order layout, csv file). 2 item(s) "
                              "head a triplet, from 1 to 2 triplets each (median 2). Items are numbered 0..n-1 "
                              "(no labels). 2 item(s) appear in no triplet.")


def test_labels_and_skipped_rows():
    text = "head,left,right,winner\nParis,Rome,Oslo,Rome\nRome,Paris,Oslo,Oslo\nOslo,Rome,Rome,Rome\n"
    sm = summarize(read_triplets(io.StringIO(text), errors="skip"))
    assert sm["labels"] == "text" and sm["label_examples"] == ["Oslo", "Paris", "Rome"]
    assert sm["n_skipped"] == 1 and sm["layout"] == "crowd"
    assert sm["sentence"].endswith("Items are named by text labels (e.g. Oslo, Paris, Rome). 1 row(s) were skipped.")
    assert "1 triplet each" in sm["sentence"]
    ids = summarize(read_triplets(io.StringIO("10,20,30\n20,10,30\n")))
    assert ids["labels"] == "ids" and ids["label_examples"] == ["10", "20", "30"]
    assert "integer ids that are not 0..n-1" in ids["sentence"]


def test_empty_triplet_array():
    from loe_viz.io import TripletData

    data = TripletData(np.empty((0, 3), np.int32), np.arange(4), 4, "x.csv", "list-order", "csv")
    sm = summarize(data)
    assert sm["n_heads"] == 0 and sm["per_head"] == {} and sm["unused_items"] == 4
    assert sm["sentence"] == ("Read 0 triplets over 4 items from x.csv (list-order layout, csv file). Items are "
                              "numbered 0..n-1 (no labels). 4 item(s) appear in no triplet.")


def test_method_advice_follows_the_triplets_per_item_of_loes_landmarks():
    """'loe-viz info' says which method suits the file, from the 5th busiest head (d = 2) alone."""
    from loe_viz import TripletOracle, make_points
    from loe_viz.describe import LOE_DESIGN_PER_ITEM, method_advice
    from loe_viz.loe import WELL_COVERED

    assert LOE_DESIGN_PER_ITEM == WELL_COVERED  # the rule LOE's landmark choice calls well covered
    oracle = TripletOracle(make_points("gaussian", 200, random_state=0), random_state=1)
    design = _data(oracle.landmark_triplets(np.arange(6), 1200))  # 1200 per head: 6.03 per item
    assert method_advice(summarize(design)) == (
        "LOE's design: its d + 3 = 5 busiest heads hold 6.03 or more triplets per item each (5 or more suit "
        "LOE's own rankings)")
    spread = _data(oracle.uniform_triplets(20_000))  # about 100 per head
    text = method_advice(summarize(spread))
    assert text.startswith("Too few triplets for LOE alone: LOE ranks every item from its landmarks' own triplets, "
                           "and the 5th busiest head (d + 3 = 5 landmarks at the least) has 0.") and text.endswith(
        " triplets per item, where LOE's rankings need about 5; LOE-STE or STE, which fit every triplet, place these "
        "items better")
    assert method_advice(summarize(design), d=4).startswith("LOE needs triplets headed by at least d + 3 = 7 items "
                                                            "(d = 4); these have 6 head(s): STE fits them")


def _data(T):
    buf = io.StringIO("".join(f"{i},{j},{k}\n" for i, j, k in T.tolist()))
    return read_triplets(buf, n_items=200)


def test_one_triplet_is_one_in_the_sentence():
    one = summarize(read_triplets(io.StringIO("0,1,2\n")))
    assert one["sentence"].startswith("Read 1 triplet over 3 items from <buffer> "), one["sentence"]
    two = summarize(read_triplets(io.StringIO("0,1,2\n1,0,2\n")))
    assert two["sentence"].startswith("Read 2 triplets over 3 items"), two["sentence"]


def test_a_long_label_is_shown_by_its_start_and_length():
    """A label of 60,000 characters made 'loe-viz info' print a line of 60,042 characters (and the sentence one of
    60,189); the reader's own messages already cut a long cell so."""
    long = "A" * 60000
    text = "head,winner,loser\n" + "".join(f"{long},b{i},c{i}\nb{i},c{i},{long}\n" for i in range(5))
    sm = summarize(read_triplets(io.StringIO(text)))
    assert sm["label_examples"][0] == "A" * 40 + "...(60,000 characters)"
    assert sm["label_examples"][1:] == ["b0", "b1", "b2", "b3"]
    assert len(sm["sentence"]) < 400 and "...(60,000 characters), b0, b1)." in sm["sentence"]


def test_repeated_rows_counts_rows_equal_to_an_earlier_one_as_a_slow_reference_does():
    """Copies of rows land in both the training and the held-out share: 500 random triplets written four times
    held out 0.6375 where the file once held out 0.52 (STE), and nothing said why."""
    from loe_viz.describe import repeated_rows

    rng = np.random.default_rng(3)
    for n, m in [(6, 200), (30, 500), (2_100_000, 300)]:  # the last: n**3 beyond int64, the sorted-rows branch
        T = rng.integers(0, n, size=(m, 3))
        T[m // 2:] = T[rng.integers(0, m // 2, size=m - m // 2)]  # half the rows copied from the first half
        seen, slow = set(), 0
        for row in map(tuple, T.tolist()):
            slow += row in seen
            seen.add(row)
        assert repeated_rows(T, n) == slow >= m // 2 - 5
        assert repeated_rows(T.astype(np.int32), n) == slow
    assert repeated_rows(np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2]]), 3) == 0  # other orders are other rows
    assert repeated_rows(np.zeros((0, 3), dtype=np.int64), 3) == 0
    text = "0,1,2\n0,1,2\n0,2,1\n0,1,2\n"
    sm = summarize(read_triplets(io.StringIO(text)))
    assert sm["n_repeated"] == 2 and sm["sentence"].endswith(" 2 row(s) repeat an earlier row.")


def _slow_groups(T, n):
    """Groups by breadth-first search over the items that share a triplet (the reference)."""
    near = {i: set() for i in range(n)}
    for row in T.tolist():
        for a in row:
            near[a].update(row)
    group, seen = {}, set()
    for start in range(n):
        if start in seen or not near[start]:
            continue
        todo, members = [start], []
        seen.add(start)
        while todo:
            i = todo.pop()
            members.append(i)
            todo += [j for j in near[i] if j not in seen]
            seen.update(near[i])
        for i in members:
            group[i] = frozenset(members)
    return group


def test_comparison_groups_match_a_breadth_first_search():
    from loe_viz.describe import comparison_groups

    rng = np.random.default_rng(11)
    for n, m in ((30, 8), (60, 25), (200, 120), (50, 400)):
        T = np.array([rng.choice(n, 3, replace=False) for _ in range(m)], dtype=np.int32)
        g = comparison_groups(T, n)
        ref = _slow_groups(T, n)
        assert set(np.flatnonzero(g < 0).tolist()) == set(range(n)) - set(ref)
        for i, members in ref.items():
            assert set(np.flatnonzero(g == g[i]).tolist()) == members
        sizes = np.bincount(g[g >= 0])
        assert (np.diff(sizes) <= 0).all() and sizes.size == len(set(ref.values()))  # 0 is the largest


def test_groups_that_no_triplet_relates_are_named_in_the_summary_and_its_sentence():
    """Two groups never compared: where they lie relative to each other is arbitrary in any embedding, and a
    held-out accuracy cannot show it (its triplets never mix them either)."""
    text = "head,winner,loser\nOslo,Rome,Paris\nRome,Paris,Oslo\nKyiv,Riga,Vilnius\nRiga,Kyiv,<b>Vilnius</b>\n"
    sm = summarize(read_triplets(io.StringIO(text)))
    assert sm["n_groups"] == 2
    assert sm["groups"] == ("the triplets split the items into 2 groups that no triplet relates (of 4 and 3 items; "
                            "'<b>Vilnius</b>', 'Oslo' are in different groups): where the groups lie relative to one another "
                            "(position, rotation, scale) is arbitrary in the embedding; triplets that mix the groups "
                            "would fix it")
    assert sm["sentence"].endswith(f"Note: {sm['groups']}.")
    one = summarize(read_triplets(io.StringIO("0,1,2\n2,3,4\n")))
    assert one["n_groups"] == 1 and one["groups"] == "" and "Note" not in one["sentence"]


def test_many_groups_are_counted_as_groups_and_their_items():
    """'(of 5, 5, 5, 5 and 296 more items' counted 296 groups as items."""
    from loe_viz.describe import comparison_groups, groups_note

    T = np.array([[5 * g + a, 5 * g + b, 5 * g + c] for g in range(300) for a, b, c in ((0, 1, 2), (2, 3, 4))])
    note = groups_note(comparison_groups(T, 1500))
    assert note.startswith("the triplets split the items into 300 groups that no triplet relates (the largest four "
                           "of 5, 5, 5 and 5 items, the other 296 groups of 1,480 items together; [0, 5, 10] are in "
                           "different groups)")
    # five are all listed ("the other 1 groups of 5 items together")
    five = groups_note(comparison_groups(T[:10], 25))
    assert five.startswith("the triplets split the items into 5 groups that no triplet relates (of 5, 5, 5, 5 and 5 "
                           "items; [0, 5, 10] are in different groups)"), five
