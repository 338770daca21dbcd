"""Tests of loe_viz.io: round trips, malformed files, fuzzing."""

from __future__ import annotations

import gzip
import io
import math
import os
import pickle
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loe_viz.io import TripletData, read_triplets, write_triplets


def random_triplets(n=12, m=200, seed=0):
    """Random list-order triplets in which every item 0..n-1 appears."""
    rng = np.random.default_rng(seed)
    rows = np.array([rng.choice(n, 3, replace=False) for _ in range(m)])
    perm = rng.permutation(n)
    for r in range(n):
        rows[r] = [perm[r], perm[(r + 1) % n], perm[(r + 2) % n]]
    return rows.astype(np.int64)


T = random_triplets()
CITIES = np.array(["Amsterdam", "Athens", "Berlin", "Bern", "Brussels", "Dublin", "Lisbon", "London",
                   "Madrid", "Oslo", "Paris", "Rome"])


def read_text(text, **kw):
    return read_triplets(io.StringIO(text), **kw)


def read_bytes(data, **kw):
    return read_triplets(io.BytesIO(data), **kw)


# ----------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("layout", ["list-order", "crowd", "list-boolean", "list-count"])
@pytest.mark.parametrize("ext", [".csv", ".tsv", ".txt"])
def test_round_trip_text_integer(tmp_path, layout, ext):
    path = tmp_path / f"t{ext}"
    fmt = "text" if ext == ".txt" else "auto"
    write_triplets(path, T, layout=layout, format=fmt, random_state=3)
    data = read_triplets(path)
    np.testing.assert_array_equal(data.triplets, T)
    np.testing.assert_array_equal(data.labels, np.arange(12))
    assert data.n_items == 12
    assert data.layout == layout
    assert data.source == str(path)
    assert data.triplets.dtype == np.int32


@pytest.mark.parametrize("layout", ["list-order", "crowd", "list-boolean", "list-count"])
@pytest.mark.parametrize("ext", [".csv", ".tsv"])
def test_round_trip_text_labels(tmp_path, layout, ext):
    path = tmp_path / f"t{ext}"
    write_triplets(path, T, labels=CITIES, layout=layout)
    data = read_triplets(path)  # labels come back sorted: CITIES is sorted, so indices are equal
    np.testing.assert_array_equal(data.triplets, T)
    np.testing.assert_array_equal(data.labels, CITIES)
    assert data.layout == layout


def test_round_trip_unsorted_labels_with_labels_argument(tmp_path):
    labels = CITIES[::-1].copy()
    path = tmp_path / "t.csv"
    write_triplets(path, T, labels=labels, layout="crowd")
    exact = read_triplets(path, labels=labels)
    np.testing.assert_array_equal(exact.triplets, T)
    np.testing.assert_array_equal(exact.labels, labels)
    plain = read_triplets(path)
    np.testing.assert_array_equal(plain.labelled(), labels[T])


def test_round_trip_integer_labels(tmp_path):
    ids = np.array([3, 10, 11, 17, 20, 42, 99, 100, 512, 1000, 4096, 70000])
    for name in ("t.csv", "t.npz"):
        path = tmp_path / name
        write_triplets(path, T, labels=ids)
        data = read_triplets(path)
        np.testing.assert_array_equal(data.triplets, T)
        np.testing.assert_array_equal(data.labels, ids)


@pytest.mark.parametrize("layout", ["list-order", "list-boolean", "list-count"])
def test_round_trip_npz(tmp_path, layout):
    path = tmp_path / "t.npz"
    write_triplets(path, T, labels=CITIES, layout=layout)
    with np.load(path, allow_pickle=False) as z:
        assert set(z.files) == ({"triplets", "labels"} if layout == "list-order" else {"X", "y", "labels"})
        if layout == "list-boolean":
            assert z["y"].dtype == bool and not z["y"].all()
        if layout == "list-count":
            assert set(np.unique(z["y"])) == {-1, 1}
    data = read_triplets(path)
    np.testing.assert_array_equal(data.triplets, T)
    np.testing.assert_array_equal(data.labels, CITIES)
    assert data.layout == layout and data.format == "npz"


def test_round_trip_npy(tmp_path):
    path = tmp_path / "t.npy"
    write_triplets(path, T)
    data = read_triplets(path)
    np.testing.assert_array_equal(data.triplets, T)
    assert data.format == "npy" and data.layout == "list-order"


def test_round_trip_buffers_and_tripletdata(tmp_path):
    bio = io.BytesIO()
    write_triplets(bio, T, labels=CITIES, layout="crowd")
    bio.seek(0)
    first = read_triplets(bio)
    sio = io.StringIO()
    write_triplets(sio, first, layout="list-order")  # TripletData brings its labels
    sio.seek(0)
    second = read_triplets(sio)
    np.testing.assert_array_equal(second.triplets, T)
    np.testing.assert_array_equal(second.labels, CITIES)
    assert isinstance(second, TripletData) and len(second) == len(T)


def test_write_is_atomic_and_validates(tmp_path):
    path = tmp_path / "t.csv"
    write_triplets(path, T)
    before = path.read_bytes()
    with pytest.raises(ValueError, match="triplets row 0 repeats an item"):
        write_triplets(path, [[0, 0, 3]])
    with pytest.raises(ValueError, match="labels must be distinct"):
        write_triplets(path, T, labels=["a"] * 12)
    with pytest.raises(ValueError, match="looks like a number"):
        write_triplets(path, T, labels=["1"] + list(CITIES[1:]))
    with pytest.raises(ValueError, match="labels cannot be stored in a .npy"):
        write_triplets(tmp_path / "t.npy", T, labels=CITIES)
    # header="no" is truthy: a header was written; each wrong argument is named alone
    for kw, message in [({"header": "no"}, "header must be True or False; got 'no'"),
                        ({"header": None}, "header must be True or False; got None"),
                        ({"format": "json"}, "format must be one of auto, csv, tsv, text, npy, npz; got 'json'"),
                        ({"layout": "triples"}, "layout must be one of list-order, crowd, list-boolean, list-count; "
                                                "got 'triples'")]:
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            write_triplets(path, T, **kw)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["t.csv"]


# ----------------------------------------------------------------------------- layouts

@pytest.mark.parametrize("header", ["head,winner,loser", "anchor,near,far", "i,j,k", "Head_ID, Winner, Loser", None])
@pytest.mark.parametrize("sep", [",", "\t", ";", " "])
def test_list_order_headers_and_delimiters(header, sep):
    body = "\n".join(sep.join(str(v) for v in row) for row in T)
    text = (sep.join(h.strip() for h in header.split(",")) + "\n" if header else "") + body + "\n"
    data = read_text(text)
    np.testing.assert_array_equal(data.triplets, T)


def test_column_order_follows_the_header():
    data = read_text("loser,head,winner\n2,0,1\n0,1,2\n")
    assert data.triplets.tolist() == [[0, 1, 2], [1, 2, 0]]


def test_crowd_answer_encodings():
    rows = [("Paris", "Rome", "Oslo", "Rome"), ("Oslo", "Paris", "Rome", "Paris")]
    want = [["Paris", "Rome", "Oslo"], ["Oslo", "Paris", "Rome"]]
    label = "head,left,right,winner\n" + "\n".join(",".join(r) for r in rows)
    side = "Center,Left,Right,Answer\nParis,Rome,Oslo,left\nOslo,Rome,Paris,RIGHT\n"
    index = "Center,Left,Right,Answer\nParis,Oslo,Rome,1\nOslo,Paris,Rome,0\n"
    for text, note in ((label, "label"), (side, "'left'/'right'"), (index, "0/1")):
        data = read_text(text)
        assert data.labelled().tolist() == want
        assert data.layout == "crowd"
        assert any(note in n for n in data.notes)


def test_crowd_integer_answers_label_or_index():
    by_label = read_text("head,left,right,winner\n5,7,9,9\n7,5,9,5\n")
    assert by_label.labelled().tolist() == [[5, 9, 7], [7, 5, 9]]
    by_index = read_text("head,left,right,winner\n5,7,9,1\n7,5,9,0\n")
    assert by_index.labelled().tolist() == [[5, 9, 7], [7, 5, 9]]
    forced = read_text("head,left,right,winner\n5,0,1,1\n", answer="index", n_items=6)
    assert forced.triplets.tolist() == [[5, 1, 0]]


def test_crowd_extra_columns_are_ignored():
    text = "worker,head,left,right,winner,rt_ms\nw1,0,1,2,2,512\nw2,1,0,2,0,300\n"
    data = read_text(text)
    assert data.triplets.tolist() == [[0, 2, 1], [1, 0, 2]]
    assert any("worker" in n and "rt_ms" in n for n in data.notes)


@pytest.mark.parametrize("sep", [",", "\t", ";"])
@pytest.mark.parametrize("header", ["head,winner,loser", "Center,Left,Right,Answer", None])
def test_a_separator_ending_every_line_is_an_empty_column_read_and_ignored(sep, header):
    # a spreadsheet's export: the header was taken for 4 (or 5) nameless columns, and the file refused
    crowd = header is not None and header.startswith("Center")
    rows = [("Paris", "Rome", "Oslo", "Rome"), ("Oslo", "Paris", "Rome", "Paris")] if crowd else T.astype(str)
    lines = ([header.replace(",", sep)] if header else []) + [sep.join(r) for r in rows]
    data = read_text("".join(ln + sep + "\n" for ln in lines))
    if crowd:
        assert data.labelled().tolist() == [["Paris", "Rome", "Oslo"], ["Oslo", "Paris", "Rome"]]
    else:
        np.testing.assert_array_equal(data.triplets, T)
    name = {",": "comma", "\t": "tab", ";": "semicolon"}[sep]
    assert f"every line ends in a {name}: the empty last column is ignored" in data.notes
    assert not any(n.startswith("ignored column") for n in data.notes)


def test_an_unnamed_ignored_column_is_named_by_its_position():
    # pandas' index column (',head,winner,loser') was noted as "ignored column(s): " followed by nothing
    data = read_text(",head,winner,loser\n0,0,1,2\n1,1,2,0\n2,2,0,1\n")
    assert data.triplets.tolist() == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert "ignored column(s): column 1 (unnamed)" in data.notes


def test_columns_may_name_the_empty_last_column_of_lines_ending_in_the_separator():
    # the header has three names and every line a fourth, empty field: columns= with its empty role was refused
    # ("columns= gives 4 roles but the header has 3 columns"), though the line visibly has four
    text = "Kopf;näher;ferner;\n0;1;2;\n1;2;0;\n2;0;1;\n"
    for columns in ("head,near,far,", "head,near,far"):
        assert read_text(text, columns=columns).triplets.tolist() == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]


def test_zero_padded_ids_are_one_item_with_their_number_and_a_note_says_so():
    # '07' and '7' were merged without a word (a float such as '7.0' had a note); codes stay apart as labels
    text = "head,winner,loser\n07,1,2\n7,3,4\n1,2,3\n"
    data = read_text(text)
    assert data.n_items == 5 and data.labels.tolist() == [1, 2, 3, 4, 7]
    assert data.notes[0] == ("some integer ids are written with leading zeros (e.g. '07'); they were read as "
                             "numbers, so '07' and '7' are one item (pass item_type='str' if they are codes)")
    assert read_text(text, item_type="str").n_items == 6
    assert not any("leading zeros" in n for n in read_text("head,winner,loser\n0,1,2\n10,0,2\n").notes)


def test_labels_in_two_unicode_forms_are_two_items_and_a_note_says_so():
    # "Zürich" with a composed and with a decomposed "ü": three names printed, four items, and not a word
    text = "head,winner,loser\nZ\u00fcrich,Bern,Genf\nZu\u0308rich,Genf,Bern\nBern,Genf,Z\u00fcrich\n"
    data = read_text(text)
    assert data.n_items == 4
    assert ("1 label(s) appear in two Unicode forms that print alike (e.g. 'Z\u00fcrich', composed and decomposed "
            "accents): each form is an item of its own; save the file in one form (NFC) if they name one item"
            ) in data.notes
    assert not any("Unicode" in n for n in read_text(text.replace("u\u0308", "\u00fc")).notes)


def test_headerless_crowd_needs_layout():
    with pytest.raises(ValueError, match="4 columns without a header"):
        read_text("0,1,2,2\n")
    assert read_text("0,1,2,2\n", layout="crowd").triplets.tolist() == [[0, 2, 1]]
    assert read_text("0,1,2,-1\n1,0,2,1\n", layout="list-count").triplets.tolist() == [[0, 2, 1], [1, 0, 2]]



@pytest.mark.parametrize("text", ["0,1,2,{}\n1,0,2,1\n", "head,j,k,y\n0,1,2,{}\n1,0,2,1\n",
                                  "0,1,2,1\n1,0,2,1\n" * 3 + "2,0,1,{}\n"])
def test_an_asked_for_response_layout_binds_its_encoding(text):
    """layout='list-count' reads +1/-1 only and 'list-boolean' True/False or 1/0: a 0 in a count file (a tie?) or a
    -1 in a boolean one is refused where it stands, not read in the other encoding without a word."""
    line = text[:text.index("{}")].count("\n") + 1
    rows = [r.split(",") for r in text.splitlines() if not r.startswith("head")]
    with pytest.raises(ValueError, match=re.escape(f"line {line}: the response '0' is not +1 or -1 "
                                                   "(layout='list-count')")):
        read_text(text.format(0), layout="list-count")
    with pytest.raises(ValueError, match=re.escape(f"line {line}: the response '-1' is not True/False or 1/0 "
                                                   "(layout='list-boolean')")):
        read_text(text.format(-1), layout="list-boolean")
    skipped = read_text(text.format(0), layout="list-count", errors="skip")
    assert (skipped.layout, skipped.n_skipped, len(skipped.triplets)) == ("list-count", 1, len(rows) - 1)
    assert read_text(text.format(1), layout="list-count").layout == "list-count"  # all +1: still the asked layout
    assert read_text(text.format(0), layout="list-boolean").layout == "list-boolean"
    odd = next(i for i, r in enumerate(rows) if r[3] == "{}")
    h, j, k = map(int, rows[odd][:3])
    assert read_text(text.format(-1), layout="list-count").triplets[odd].tolist() == [h, k, j]  # -1: k was nearer


@pytest.mark.parametrize(("layout", "y", "message"), [
    ("list-count", [1, 0], "y row 1 (counting from 0) holds 0; list-count responses are +1/-1"),
    ("list-count", [True, False], "y is boolean; list-count responses are +1/-1"),
    ("list-boolean", [1, -1], "y row 1 (counting from 0) holds -1; list-boolean responses are True/False or 1/0")])
def test_an_asked_for_response_layout_binds_the_npz_y(layout, y, message):
    buf = io.BytesIO()
    np.savez(buf, X=np.array([[0, 1, 2], [1, 2, 3]]), y=np.array(y))
    with pytest.raises(ValueError, match=re.escape(f"layout={layout!r} was asked for but {message}")):
        read_triplets(io.BytesIO(buf.getvalue()), layout=layout)
    np.savez(buf := io.BytesIO(), X=np.array([[0, 1, 2], [1, 2, 3]]), y=np.array([1, 1]))
    assert read_triplets(io.BytesIO(buf.getvalue()), layout=layout).layout == layout

def test_columns_argument():
    data = read_text("x,y,z\nb,a,c\n", columns=["far", "head", "near"], header=True)
    assert data.labelled().tolist() == [["a", "c", "b"]]


def test_windows_line_endings_and_bom_work():
    text = "head,winner,loser\r\n0,1,2\r\n\r\n2,1,0\r\n"
    raw = b"\xef\xbb\xbf" + text.encode()
    for data in (read_bytes(raw), read_bytes(text.encode()), read_text(text)):
        assert data.triplets.tolist() == [[0, 1, 2], [2, 1, 0]]
    labelled = b"\xef\xbb\xbfhead,left,right,winner\r\nParis,Rome,Oslo,Rome\r\n"
    assert read_bytes(labelled).labelled().tolist() == [["Paris", "Rome", "Oslo"]]


def test_lone_carriage_return_line_endings():
    assert read_bytes(b"head,winner,loser\r0,1,2\r2,1,0\r").triplets.tolist() == [[0, 1, 2], [2, 1, 0]]
    with pytest.raises(ValueError, match="line 3: the row repeats an item"):
        read_bytes(b"head,winner,loser\r0,1,2\r0,1,1\r")


def test_comments_blank_lines_and_quotes():
    text = '# exported\n\nhead,winner,loser\n# a comment\n"Washington, D.C.",Ottawa,Lima\n\nLima,Quito,Ottawa\n'
    data = read_text(text)
    assert data.labelled().tolist() == [["Washington, D.C.", "Ottawa", "Lima"], ["Lima", "Quito", "Ottawa"]]


def test_a_row_that_starts_with_a_hash_is_a_comment_and_the_notes_say_so():
    """Labels such as '#ff0000' (colours) at the start of a row made it a comment: two of four rows and an item
    were gone without a word. They are still comments (quoted they are labels), and a note counts them."""
    text = "head,winner,loser\n#f00,#0f0,#00f\n#0f0,#00f,#f00\n#00f,#f00,#0f0\n#f00,#00f,#0f0\n"
    data = read_text(text.replace("#", "x"))
    assert data.n_triplets == 4 and data.notes == ()
    (note,) = read_text("head,winner,loser\n#red,blue,green\nblue,green,yellow\ngreen,yellow,blue\n"
                        "#red,green,blue\n").notes
    assert note == ("2 line(s) that start with '#' were skipped as comments, though they hold 3 fields (head, near, "
                    "far) like a data row (the first, line 2: '#red,blue,green'); quote a label that starts with '#' "
                    "to read it")
    quoted = read_text('head,winner,loser\n"#red",blue,green\nblue,green,yellow\n"#red",green,blue\n')
    assert quoted.n_triplets == 3 and "#red" in quoted.labels.tolist() and quoted.notes == ()
    # a comment, a commented header and a commented integer row: only the row is counted
    (note,) = read_text("# exported by hand\n#i j k\n0 1 2\n1 2 3\n\n#2 3 4\n2 3 0\n").notes
    assert note == ("1 line(s) that start with '#' were skipped as comments, though they hold 3 fields (head, near, "
                    "far) like a data row (the first, line 6: '#2 3 4'); delete the '#' of those that are data")
    assert read_text("# exported\n#i j k\n0 1 2\n1 2 3\n").notes == ()


@pytest.mark.parametrize("block", [6, 7, 8, 9, 1 << 20])
def test_the_line_of_the_first_row_lost_to_a_comment_is_right_whatever_the_blocks(block, monkeypatch):
    """The count reads the file in blocks: a block that ended on a line break counted that break twice."""
    from loe_viz.io import reading

    monkeypatch.setattr(reading, "_SCAN_BLOCK", block)
    text = "head,winner,loser\na,b,c\nb,c,d\nc,d,a\n#e,a,b\nd,a,b\n"
    (note,) = read_text(text).notes
    assert "(the first, line 5: '#e,a,b')" in note, note


def test_ids_written_as_floats_are_read_exactly_and_the_note_quotes_one():
    """Ids beyond 2**53 went through a float: 9007199254740993.0 became ...992, merging two items (and a row of
    the two was 'a repeated item'); the note quoted '3.0' whatever the file held."""
    data = read_text("head,winner,loser\n1,9007199254740993.0,5\n2,9007199254740992.0,6\n")
    assert data.n_items == 6 and data.labels.tolist()[-2:] == [9007199254740992, 9007199254740993]
    assert data.notes[0] == ("some integer ids are written as floats (e.g. '9007199254740993.0'); they were read as "
                             "integers")
    assert read_text("1,9007199254740993.0,9007199254740992.0\n").labels.tolist() == [
        1, 9007199254740992, 9007199254740993]
    assert read_text("1,2,3\n3,1e15,5\n").notes[0] == (
        "some integer ids are written as floats (e.g. '1e15'); they were read as integers")
    with pytest.raises(ValueError, match=r"line 2: non-integer item index '9007199254740993\.5' in the closer column"):
        read_text("1,2,3\n3,9007199254740993.5,5\n")


def test_an_npz_whose_labels_are_too_few_names_the_index_and_the_labels_range():
    """It said 'an index that is too large for the 3 labels', which left the reader to find which and how many."""
    buf = io.BytesIO()
    np.savez(buf, triplets=np.array([[0, 1, 2], [1, 2, 3]]), labels=np.array(["a", "b", "c"]))
    buf.seek(0)
    with pytest.raises(ValueError, match=r"^<buffer>: triplets row 1 \(counting from 0\) holds index 3, too large for "
                                         r"the 3 labels \(indices 0\.\.2\): \[1, 2, 3\]$"):
        read_triplets(buf, format="npz")


def test_integer_relabelling():
    data = read_text("10,20,30\n30,10,40\n")
    assert data.labels.tolist() == [10, 20, 30, 40]
    assert data.triplets.tolist() == [[0, 1, 2], [2, 0, 3]]
    assert any("mapped to 0..3" in n for n in data.notes)
    one_based = read_text("1,2,3\n3,1,2\n")
    assert one_based.labels.tolist() == [1, 2, 3] and one_based.triplets.tolist() == [[0, 1, 2], [2, 0, 1]]
    kept = read_text("10,20,30\n", n_items=50)
    assert kept.triplets.tolist() == [[10, 20, 30]] and kept.n_items == 50
    assert any("47 of the 50 items never appear" in n for n in kept.notes)
    assert read_text("1,2,3\n", relabel=False).n_items == 4



def test_the_relabelling_note_says_how_a_held_out_file_keeps_the_training_numbering():
    """A test file that misses some of the training file's items is renumbered on its own; the note names the two
    arguments that keep the numbering, and both give back the ids as written."""
    train, test = read_text("0,1,2\n3,4,5\n2,4,0\n"), "1,2,4\n5,4,2\n"
    (note,) = read_text(test).notes
    assert note.endswith("labels maps each index back to its id (to keep the ids, pass n_items=6; to share another "
                         "file's numbering, such as a training file's, pass its labels=)")
    (huge,) = read_text(f"0,1,{2**62}\n").notes  # no n_items can keep an id that large
    assert huge.endswith("labels maps each index back to its id (to share another file's numbering, such as a training "
                         "file's, pass its labels=)")
    for kw in ({"n_items": 6}, {"labels": train.labels}):
        assert read_text(test, **kw).triplets.tolist() == [[1, 2, 4], [5, 4, 2]]


def test_n_items_takes_a_whole_float_as_the_estimators_do():
    """LOE(...).fit(T, n_items=200.0) works; read_triplets refused the same 200.0."""
    assert read_text("10,20,30\n", n_items=50.0).n_items == 50
    for bad in (50.5, math.nan, math.inf, True, "50", 2.0):
        message = f"n_items must be an integer from 3 to 2147483646, got {bad!r}"
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            read_text("0,1,2\n", n_items=bad)

def test_integral_floats_are_accepted():
    data = read_text("0.0,1.000000000000000000e+00,2\n")
    assert data.triplets.tolist() == [[0, 1, 2]]
    assert any("floats" in n for n in data.notes)


def test_item_type_str_reads_numbers_as_labels():
    data = read_text("007,12,abc\n", item_type="str")
    assert data.labelled().tolist() == [["007", "12", "abc"]]


def test_errors_skip():
    text = "head,left,right,winner\n0,1,2,2\n0,0,2,2\n1,2,3,9\n1,2\n3,1,2,1\n"
    data = read_text(text, errors="skip")
    assert data.triplets.tolist() == [[0, 2, 1], [3, 1, 2]]
    assert data.n_skipped == 3
    assert any("skipped 3 row(s)" in n and "line 3" in n for n in data.notes)


def test_fast_path_error_far_into_the_file():
    rows = "\n".join(f"{i % 7},{(i + 1) % 7},{(i + 2) % 7}" for i in range(50_000))
    text = "head,winner,loser\n" + rows + "\n1,1,2\n"
    with pytest.raises(ValueError, match="line 50002: the row repeats an item"):
        read_text(text)


def test_large_files_are_parsed_in_chunks(monkeypatch):
    import loe_viz.io.reading as lio

    rng = np.random.default_rng(5)
    big = np.array([rng.choice(50, 3, replace=False) for _ in range(3000)])
    bio = io.BytesIO()
    write_triplets(bio, big, layout="crowd")
    whole = read_bytes(bio.getvalue())
    monkeypatch.setattr(lio, "_CHUNK", 97)
    chunked = read_bytes(bio.getvalue().replace(b"\n", b"\r\n"))
    np.testing.assert_array_equal(whole.triplets, chunked.triplets)
    lab = io.BytesIO()
    write_triplets(lab, big, labels=[f"item{i}" for i in range(50)], layout="crowd")
    np.testing.assert_array_equal(read_bytes(lab.getvalue()).labelled(), np.char.add("item", big.astype(str)))


# ----------------------------------------------------------------------------- malformed files

MALFORMED = [
    ("", "the file is empty"),
    ("\n\n# only a comment\n", "no data rows"),
    ("head,winner,loser\n", "line 1: the file has a header but no data rows"),
    ("0,1,2\n1,abc,2\n", "line 2: mixed types"),
    ("Paris,Rome,Oslo\nRome,7,Oslo\n", "line 2: mixed types: closer item '7' is a number"),
    ("head,winner,loser\n0,1,2\n-1,2,3\n", "line 3: negative item index -1"),
    ("0,1,2\n1,99999999999999999999999999,2\n", "line 2: item index 9+ .* too large"),
    ("0,1,2\n1,1.5,2\n", "line 2: non-integer item index '1.5'"),
    ("head,winner\n0,1\n", "line 1: the header has no farther"),
    ("0,1,2\n1,2\n", "line 2: expected 3 fields .*got 2"),
    ("0,1,2\n1,2,3,4\n", "line 2: expected 3 fields .*got 4"),
    ("0,1,2\n1,,2\n", "line 2: empty closer field"),
    ("\n# c\nhead,winner,loser\n0,1,2\n0,1,1\n", "line 5: the row repeats an item"),
    ("head,left,right,winner\n1,2,3,7\n", "line 2: the answer '7' names none of the row's items"),
    ("Center,Left,Right,Answer\nParis,Rome,Oslo,Lyon\n", "line 2: the answer 'Lyon' names none"),
    ("head,left,right,winner\n0,1,2,\n", "line 2: the answer field is empty"),
    ("foo,bar,baz\n0,1,2\n", "line 1: the header .* names no known column"),
    ("0,1,2,1\n", "line 1: 4 columns without a header"),
    ("0 1 2 3 4\n", "line 1: expected 3 fields"),
    ("head,j,k,y\n0,1,2,maybe\n", "line 2: the response 'maybe'"),
]


@pytest.mark.parametrize("text,message", MALFORMED)
def test_malformed_text(text, message):
    with pytest.raises(ValueError, match=message):
        read_text(text)


def test_ids_beyond_int32_are_labels_unless_they_must_be_indices():
    data = read_text("0,1,2\n1,3000000000,2\n")
    assert data.labels.tolist() == [0, 1, 2, 3000000000] and data.triplets.tolist() == [[0, 1, 2], [1, 3, 2]]
    with pytest.raises(ValueError, match="line 2: item index 3000000000 .* too large"):
        read_text("0,1,2\n1,3000000000,2\n", relabel=False)
    with pytest.raises(ValueError, match="line 2: item index 3000000000 .*out of range for n_items=5"):
        read_text("0,1,2\n1,3000000000,2\n", n_items=5)


def test_a_first_line_longer_than_the_sniffed_sample_and_a_100000_digit_id():
    long = "9" * 100_000
    cut = r"item index 9{40}\.\.\.\(100,000 characters\) in the closer column is too large"
    with pytest.raises(ValueError, match="^<buffer>: line 2: " + cut):  # not Python's 4,300-digit int() error
        read_text(f"0,1,2\n1,{long},2\n")
    with pytest.raises(ValueError, match="^<buffer>: line 1: " + cut):  # was 'expected 3 fields, got 2'
        read_text(f"1,{long},2\n0,1,2\n")
    data = read_text(f"a,{'x' * 100_000},b\nb,a,c\n")
    assert data.layout == "list-order" and data.labelled()[0, 1] == "x" * 100_000


def test_messages_name_the_file(tmp_path):
    path = tmp_path / "answers.csv"
    path.write_text("head,winner,loser\n0,1,2\n0,1,x\n")
    with pytest.raises(ValueError, match=r"answers\.csv: line 3: mixed types"):
        read_triplets(path)


def test_out_of_range_with_n_items():
    with pytest.raises(ValueError, match="line 2: item index 5 .*out of range for n_items=5"):
        read_text("0,1,2\n0,1,5\n", n_items=5)
    with pytest.raises(ValueError, match="n_items=4 does not match the 3 distinct labels"):
        read_text("a,b,c\n", n_items=4)
    with pytest.raises(ValueError, match="farther item 'Lyon' is not one of the given labels"):
        read_text("Paris,Rome,Lyon\n", labels=["Paris", "Rome", "Oslo"])


@pytest.mark.parametrize("encoding", ["base64", "rot13", "hex", "zlib", "bz2", "uu", "quopri", "no-such-codec", 5])
def test_an_encoding_that_does_not_decode_text_is_a_value_error(encoding):
    """Codecs of bytes to bytes (base64, zlib) exist, but decode no text: a LookupError from deep in the reader."""
    with pytest.raises(ValueError, match=r"^encoding must name a text encoding such as utf-8, latin-1 or utf-16, "
                       rf"got {re.escape(repr(encoding))}$"):
        read_bytes(b"0,1,2\n", encoding=encoding)


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_named_with_the_encoding_that_reads_it(codec):
    """Without a byte-order mark, UTF-16 text was "binary content (a NUL byte on line 1)", with no word of an
    encoding; Windows tools write it so."""
    # with a letter beyond Latin-1 (the 'ő' of Győr: bytes 0x51 0x01) it was binary content again
    for text in ("head,winner,loser\nZürich,Bern,Oslo\nBern,Oslo,Zürich\n",
                 "head,winner,loser\nGyőr,Bern,Oslo\nBern,Oslo,Zürich\nOslo,Zürich,Bern\nZürich,Bern,Oslo\n"):
        data = text.encode(codec)
        with pytest.raises(ValueError, match=rf"^<buffer>: is UTF-16 text without a byte-order mark; pass "
                                             rf"encoding='{codec}' or save it as UTF-8$"):
            read_bytes(data)
        rows = [line.split(",") for line in text.splitlines()[1:]]
        assert read_bytes(data, encoding=codec).labelled().tolist() == rows
    # the small numbers of a binary file (int16 1, 2, 3, 200) are not text
    with pytest.raises(ValueError, match=r"binary content \(a NUL byte on line 1\)"):
        read_bytes(bytes([1, 0, 2, 0, 3, 0, 200, 0] * 4))


def test_invalid_text_bytes():
    with pytest.raises(ValueError, match="line 2: is not valid utf-8"):
        read_bytes(b"0,1,2\n1,\xff,2\n")
    assert read_bytes("Zürich,Genève,Bern\n".encode("latin-1"), encoding="latin-1").labels.tolist() == [
        "Bern", "Genève", "Zürich"]
    with pytest.raises(ValueError, match="not a recognised triplet file"):
        read_bytes(b"\x00\x01\x02garbage")
    with pytest.raises(ValueError, match="gzip-compressed"):
        read_bytes(gzip.compress(b"0,1,2\n"))


def test_unknown_format_and_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="^format must be one of"):
        read_text("0,1,2\n", format="xlsx")
    with pytest.raises(ValueError, match="^layout must be one of"):
        read_text("0,1,2\n", layout="tensor")
    with pytest.raises(ValueError, match="^answer must be"):
        read_text("0,1,2\n", answer="maybe")
    with pytest.raises(ValueError, match="^path_or_buffer must be a path or a file object"):
        read_triplets(42)
    bogus = tmp_path / "t.npy"
    bogus.write_text("0,1,2\n")
    with pytest.raises(ValueError, match="extension .npy but is not a NumPy .npy file"):
        read_triplets(bogus)


_UNPICKLED = []


def _record_unpickling():
    _UNPICKLED.append(True)
    return "boom"


class _Trap:
    def __reduce__(self):
        return (_record_unpickling, ())


def test_object_npy_is_refused_without_unpickling(tmp_path):
    path = tmp_path / "evil.npy"
    arr = np.empty((1, 3), dtype=object)
    arr[0] = [_Trap(), 1, 2]
    np.save(path, arr, allow_pickle=True)
    with pytest.raises(ValueError, match="evil.npy: .*object array.*never does"):
        read_triplets(path)
    npz = tmp_path / "evil.npz"
    np.savez(npz, triplets=np.array([[0, 1, 2]]), labels=np.array([_Trap(), "b", "c"], dtype=object))
    with pytest.raises(ValueError, match="labels is an object array"):
        read_triplets(npz)
    assert not _UNPICKLED
    pickle.loads(pickle.dumps(_Trap()))  # the trap does fire when unpickled
    assert _UNPICKLED


def test_an_office_document_is_not_taken_for_an_npz(tmp_path):
    # an .xlsx is a zip too: it was read as an archive whose arrays were '[Content_Types].xml' and 'xl/workbook.xml'
    import zipfile

    for name, members in (("sheet.xlsx", ("[Content_Types].xml", "xl/workbook.xml")),
                          ("sheet.ods", ("mimetype", "content.xml"))):
        with zipfile.ZipFile(tmp_path / name, "w") as zf:
            for member in members:
                zf.writestr(member, "<x/>")
        with pytest.raises(ValueError, match=rf"^{re.escape(str(tmp_path / name))}: is an office document \(a zip of "
                                             r"XML, such as an Excel \.xlsx or OpenDocument \.ods file\), not a NumPy "
                                             r"\.npz archive; save the sheet as CSV$"):
            read_triplets(tmp_path / name)


def test_malformed_numpy_files(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, a=np.zeros((2, 3), int))
    with pytest.raises(ValueError, match=r"has the arrays \['a'\]; expected 'triplets', or 'X' and 'y'"):
        read_triplets(p)
    np.savez(p, X=np.array([[0, 1, 2]]), y=np.array([3]))
    with pytest.raises(ValueError, match="y row 0 .*holds 3"):
        read_triplets(p)
    np.savez(p, X=np.array([[0, 1, 2]]), y=np.array([True, False]))
    with pytest.raises(ValueError, match=r"y must have shape \(1,\)"):
        read_triplets(p)
    q = tmp_path / "x.npy"
    np.save(q, np.zeros((4, 2), int))
    with pytest.raises(ValueError, match=r"shape \(m, 3\), got \(4, 2\)"):
        read_triplets(q)
    np.save(q, np.array([[0, 1, 2], [0, -1, 2]]))
    with pytest.raises(ValueError, match="row 1 .*negative index"):
        read_triplets(q)
    np.save(q, np.array([[0, 1, 2], [0, 2, 2]]))
    with pytest.raises(ValueError, match="row 1 .*repeats an item"):
        read_triplets(q)
    np.save(q, np.array([[0, 1, 2**40]]))
    with pytest.raises(ValueError, match="too large for relabel=False"):
        read_triplets(q, relabel=False)
    np.save(q, np.array([[0.0, 1.5, 2.0]]))
    with pytest.raises(ValueError, match="non-integer"):
        read_triplets(q)
    (tmp_path / "t.npy").write_bytes(b"\x93NUMPY\x01\x00garbage")
    with pytest.raises(ValueError, match="not a valid NumPy array"):
        read_triplets(tmp_path / "t.npy")
    (tmp_path / "z.npz").write_bytes(b"PK\x03\x04garbage")
    with pytest.raises(ValueError, match="not a valid .npz archive"):
        read_triplets(tmp_path / "z.npz")


def test_failed_read_leaves_buffer_where_it_was():
    for buf in (io.BytesIO(b"# x\n0,1,2\n0,1,1\n"), io.StringIO("# x\n0,1,2\n0,1,1\n")):
        buf.readline()
        with pytest.raises(ValueError, match="line 2: the row repeats"):
            read_triplets(buf)
        assert buf.tell() == 4
        assert read_triplets(buf, errors="skip").triplets.tolist() == [[0, 1, 2]]


# ----------------------------------------------------------------------------- fuzzing

def _check_result(data):
    assert isinstance(data, TripletData)
    t = data.triplets
    assert t.ndim == 2 and t.shape[1] == 3 and t.shape[0] >= 1
    assert t.min() >= 0 and t.max() < data.n_items
    assert (t[:, 0] != t[:, 1]).all() and (t[:, 0] != t[:, 2]).all() and (t[:, 1] != t[:, 2]).all()
    assert data.labels.shape == (data.n_items,)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_fuzz_random_bytes(raw):
    for kw in ({}, {"format": "csv"}, {"layout": "crowd"}):
        try:
            data = read_bytes(raw, **kw)
        except ValueError:
            continue
        _check_result(data)


TOKENS = st.sampled_from(["0", "1", "2", "3", "7", "-1", "1.5", "2.0", "abc", "Paris", "Rome", "", " 4 ",
                          "99999999999", "left", "right", "1e3", "nan", '"5"', '"a,b"', "#", "\u00e9t\u00e9",
                          "head", "winner", "loser", "True", "x"])


@st.composite
def near_valid_tables(draw):
    ncols = draw(st.integers(2, 5))
    nrows = draw(st.integers(0, 8))
    sep = draw(st.sampled_from([",", "\t", ";", " "]))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    lines = []
    if draw(st.booleans()):
        lines.append(sep.join(draw(st.lists(st.sampled_from(
            ["head", "left", "right", "winner", "loser", "anchor", "near", "far", "y", "answer", "extra"]),
            min_size=ncols, max_size=ncols))))
    for _ in range(nrows):
        k = ncols + draw(st.sampled_from([0, 0, 0, 0, -1, 1]))
        if draw(st.booleans()):
            row = [str(v) for v in draw(st.lists(st.integers(0, 6), min_size=k, max_size=k))]
        else:
            row = draw(st.lists(TOKENS, min_size=k, max_size=k))
        lines.append(sep.join(row))
        if draw(st.integers(0, 9)) == 0:
            lines.append("")
    text = eol.join(lines) + draw(st.sampled_from(["", eol]))
    data = text.encode("utf-8")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid_tables(), st.sampled_from(["raise", "skip"]), st.sampled_from(["auto", "crowd", "list-count"]))
def test_fuzz_near_valid_tables(raw, errors, layout):
    try:
        data = read_bytes(raw, errors=errors, layout=layout)
    except ValueError:
        return
    _check_result(data)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(-3, 2**33), min_size=1, max_size=4), min_size=0, max_size=6),
       st.sampled_from(["triplets", "X", "other"]))
def test_fuzz_numpy_files(rows, key):
    width = len(rows[0]) if rows else 3
    rows = [r for r in rows if len(r) == width]
    arr = np.array(rows, dtype=np.int64).reshape(len(rows), width)
    bio = io.BytesIO()
    if key == "triplets":
        np.save(bio, arr)
    elif key == "X":
        np.savez(bio, X=arr, y=np.ones(len(rows), dtype=bool))
    else:
        np.savez(bio, other=arr)
    try:
        data = read_bytes(bio.getvalue())
    except ValueError:
        return
    _check_result(data)


def _read_in_chunks(raw, rows, **kw):
    """Read ``raw`` with pandas chunks of ``rows`` rows (labels: rows // 16); return the outcome."""
    import loe_viz.io.reading as lio

    orig = lio._CHUNK
    lio._CHUNK = rows
    try:
        d = read_bytes(raw, **kw)
        return ("ok", d.triplets.tolist(), d.labels.tolist(), d.n_skipped, d.layout, d.notes)
    except ValueError as exc:
        return ("error", str(exc))
    finally:
        lio._CHUNK = orig


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(near_valid_tables(), st.sampled_from(["raise", "skip"]), st.sampled_from(["auto", "crowd", "list-count"]))
def test_fuzz_chunked_reading_agrees(raw, errors, layout):
    """Chunks of one or two rows (each typed by pandas on its own) give the same triplets or the same error."""
    whole = _read_in_chunks(raw, 1 << 20, errors=errors, layout=layout)
    assert _read_in_chunks(raw, 16, errors=errors, layout=layout) == whole
    assert _read_in_chunks(raw, 32, errors=errors, layout=layout) == whole


def test_unicode_whitespace_around_labels_is_stripped():
    data = read_text("Par\u00eds\u00a0,Rome,\u00a0Oslo\nOslo,Rome,Par\u00eds\n")
    assert data.labels.tolist() == ["Oslo", "Par\u00eds", "Rome"]
    assert data.triplets.tolist() == [[1, 2, 0], [0, 2, 1]]


@st.composite
def integer_tables(draw):
    """Tables of integers as the compiled reader takes them, and the odd cases it must hand to pandas."""
    ncols = draw(st.sampled_from([3, 4]))
    sep = draw(st.sampled_from([",", "\t", ";", " ", "  ", " \t"]))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    odd = draw(st.booleans())
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        items = draw(st.lists(st.integers(0, 9), min_size=3, max_size=3, unique=True))
        row = [str(v) for v in items + ([draw(st.sampled_from([items[1], items[2], 0, 1, -1]))] if ncols == 4 else [])]
        if odd and draw(st.integers(0, 2)) == 0:
            row[draw(st.integers(0, ncols - 1))] = draw(st.sampled_from(
                ["-1", "007", "+1", "2147483647", "2147483648", "12345678901", "", "1.0", "x"]))
        rows.append(row)
    head = draw(st.sampled_from([None, "head,left,right,winner" if ncols == 4 else "head,winner,loser"]))
    lines = ([head.replace(",", sep)] if head else []) + [sep.join(r) for r in rows]
    return (eol.join(lines) + draw(st.sampled_from(["", eol]))).encode()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(integer_tables(), st.sampled_from(["raise", "skip"]), st.sampled_from(["auto", "crowd", "list-count"]))
def test_fuzz_compiled_integer_reader_agrees_with_pandas(raw, errors, layout):
    """Integer files read by the compiled loop give what the pandas reader gives (result or error)."""
    import loe_viz.io.fastpath as fp

    def outcome():
        try:
            d = read_bytes(raw, errors=errors, layout=layout)
            return ("ok", d.triplets.tolist(), d.triplets.dtype, d.labels.tolist(), d.n_skipped, d.layout, d.notes)
        except ValueError as exc:
            return ("error", str(exc))

    fast = outcome()
    orig, fp.int_table = fp.int_table, lambda *args: None
    try:
        assert outcome() == fast
    finally:
        fp.int_table = orig


@pytest.mark.parametrize("careful", [False, True])
def test_crowd_answers_written_00_and_01_are_sides_in_either_reader(careful, monkeypatch):
    """The compiled reader took the answer '00' as the number 0 (left) and the pandas reader refused it, so the
    same rows read or failed by whether another line of the file was odd (found by differential fuzzing)."""
    import loe_viz.io.fastpath as fp

    if careful:
        monkeypatch.setattr(fp, "int_table", lambda *args: None)
    got = read_bytes(b"2,9,7,00\r\n3,9,7,01\r\n", layout="crowd")
    assert got.labelled().tolist() == [[2, 9, 7], [3, 7, 9]]
    assert "answers are 0/1 (0 = left item chosen, 1 = right item chosen)" in got.notes


# ------------------------------------------------------- the advice of a message is the right one to follow
def test_header_false_above_numbers_says_the_line_is_a_header_rather_than_suggesting_text_labels():
    """With header=False, 'head,winner,loser' above numbers made the ids text labels and the message advised
    item_type='str', which then read the three header words as items without a word."""
    raw = b"head,winner,loser\n0,1,2\n2,0,1\n"
    with pytest.raises(ValueError, match=r"^<buffer>: line 1: header=False, but this line \['head', 'winner', "
                                         r"'loser'\] is text above a line of numbers, as a header is: drop "
                                         r"header=False to read it as the header, or pass item_type='str' if its "
                                         r"cells are items too$"):
        read_bytes(raw, header=False)
    assert read_bytes(raw, header=False, item_type="str").n_items == 6  # asked for: the words are items
    assert read_bytes(raw).labelled().tolist() == [[0, 1, 2], [2, 0, 1]]


def test_columns_with_a_header_that_names_one_of_their_roles_skip_that_header():
    """A crowd export's header named no complete set of roles, so columns= was needed, and then its first line was
    read as a row ('choice' names none of the row's items) unless header=True was given too."""
    raw = b"WorkerId,anchor,option_a,option_b,choice,rt_ms\nW3,a,b,c,right,2631\nW2,b,d,a,left,1344\n"
    with pytest.raises(ValueError, match=r"^<buffer>: line 1: expected 3 fields \(head, near, far\), got 6; if this "
                                         r"line names the columns, name the roles \(head,winner,loser or head,left,"
                                         r"right,winner; other columns are ignored\) or pass columns= with "
                                         r"header=True$"):
        read_bytes(raw)
    got = read_bytes(raw, columns=",head,left,right,answer,")
    assert got.labelled().tolist() == [["a", "c", "b"], ["b", "d", "a"]]
    # numbers in the item columns below text: a header too, whatever its other cells say
    got = read_bytes(b"w,x,y,z,pick\nW1,0,1,2,2\n", columns=",head,left,right,answer")
    assert got.triplets.tolist() == [[0, 2, 1]]


BODY = "knee,hand,foot,{}\nhead,arm,leg,{}\nneck,eye,head,{}\nfoot,knee,arm,{}\n"


@pytest.mark.parametrize("first, answers, layout", [
    ("head,left,right,winner", ("hand", "leg", "eye", "knee"), "crowd"),
    ("head,winner,loser", None, "list-order"),
    ("Head,Winner,Loser", None, "list-order"),
    ("head,j,k,y", ("1", "0", "true", "false"), "list-boolean"),
])
def test_a_layouts_own_header_is_read_as_the_header_when_items_share_its_names(tmp_path, first, answers, layout):
    """A body-parts file (the item 'head') with the crowd header was refused as '4 columns without a header', and
    'head,winner,loser' became a row of three items: any header cell that was also an item below made it data."""
    body = BODY.format(*answers) if answers else BODY.replace(",{}", "")
    path = tmp_path / "body_parts.csv"
    path.write_text(f"{first}\n{body}")
    data = read_triplets(path)
    assert (data.n_items, data.layout) == (8, layout)
    want = {"crowd": [["knee", "hand", "foot"], ["head", "leg", "arm"], ["neck", "eye", "head"],
                      ["foot", "knee", "arm"]],
            "list-order": [["knee", "hand", "foot"], ["head", "arm", "leg"], ["neck", "eye", "head"],
                           ["foot", "knee", "arm"]],
            "list-boolean": [["knee", "hand", "foot"], ["head", "leg", "arm"], ["neck", "eye", "head"],
                             ["foot", "arm", "knee"]]}[layout]
    assert data.labelled().tolist() == want
    assert not any("read as data" in n for n in data.notes)


def test_header_false_still_reads_a_layouts_own_header_as_data_and_other_first_lines_of_items_stay_data():
    text = "head,winner,loser\n" + BODY.replace(",{}", "")
    forced = read_text(text, header=False)
    assert forced.n_items == 10 and forced.labelled().tolist()[0] == ["head", "winner", "loser"]
    with pytest.raises(ValueError, match=r"line 1: 4 columns and header=False: pass layout= \(crowd, list-boolean or "
                       r"list-count\); this line names the columns of a crowd file: drop header=False to read it as "
                       r"the header$"):
        read_text("head,left,right,winner\n" + BODY.format("hand", "leg", "eye", "knee"), header=False)
    with pytest.raises(ValueError, match=r"line 1: 4 columns and header=False: pass layout= \(crowd, list-boolean or "
                       r"list-count\)$"):  # it said 'without a header: name them', though header=False forbids it
        read_text("0,1,2,1\n", header=False)
    # names of roles that are not a layout's own header, above rows that hold them: a row of items
    data = read_text("head,near,far\n" + BODY.replace(",{}", ""))
    assert data.n_items == 10 and data.labelled().tolist()[0] == ["head", "near", "far"]
    assert any("first line 'head,near,far' was read as data" in n for n in data.notes)


def test_item_type_int_asked_for_names_the_setting_not_the_file():
    with pytest.raises(ValueError, match=r"^<buffer>: line 1: head item 'a' is not an integer, but item_type='int' "
                                         r"was given; pass item_type='str' to read every id as a text label; "
                                         r"errors='skip' drops the rows with problems$"):
        read_bytes(b"a,b,c\n", item_type="int")


@pytest.mark.parametrize("careful", [False, True])
def test_a_response_column_mixing_0_and_minus_1_is_refused_as_the_npz_reader_refuses_it(careful, monkeypatch):
    """0 beside -1 is 'false' in one encoding and a tie in none: the text reader took both as false."""
    import loe_viz.io.fastpath as fp

    if careful:
        monkeypatch.setattr(fp, "int_table", lambda *args: None)
    with pytest.raises(ValueError, match=r"^<buffer>: line 4: the response '-1' mixes two encodings with the '0' "
                                         r"of line 3: y must be True/False \(1/0\) or \+1/-1 throughout$"):
        read_bytes(b"head,j,k,y\n0,1,2,1\n1,2,0,0\n2,0,1,-1\n3,0,1,1\n")
    assert read_bytes(b"head,j,k,y\n0,1,2,1\n1,2,0,-1\n").layout == "list-count"
    assert read_bytes(b"head,j,k,y\n0,1,2,1\n1,2,0,0\n").layout == "list-boolean"


@pytest.mark.parametrize("option", [dict(columns="head,near,far"), dict(header=True), dict(delimiter=";"),
                                    dict(answer="side")])
def test_text_options_on_a_numpy_file_are_refused_not_ignored(option, tmp_path):
    path = tmp_path / "t.npz"
    np.savez(path, triplets=np.array([[0, 1, 2]]))
    with pytest.raises(ValueError, match=rf"t\.npz: {next(iter(option))}= applies to text files; a \.npz file "
                                         r"names its arrays \(triplets, or X and y\)$"):
        read_triplets(path, **option)


def test_an_array_above_the_limit_names_the_limits_unit(tmp_path):
    """'... above the limit of 1,073,741,824' had no unit; the size before it had one."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<i8", "fortran_order": False, "shape": (10**8, 3)})
    path = tmp_path / "huge.npy"
    path.write_bytes(header.getvalue() + bytes(100))
    with pytest.raises(ValueError) as info:
        read_triplets(path)
    assert str(info.value) == (f"{path}: the array, declared with shape (100000000, 3) and dtype int64, is "
                               "2,400,000,000 bytes, above the limit of 1,073,741,824 bytes (raise it with "
                               "read_triplets(..., limits={'array_bytes': ...}) or loe_viz.io.MAX_ARRAY_BYTES)")


def test_a_table_that_is_no_triplet_file_and_mixed_separators_are_named():
    # the bundled map of the capitals (name, country, latitude, longitude) was "4 columns without a
    # header: name them ... or pass layout=", and a line split on tabs with spaces inside a field
    # "expected 3 fields, got 2" with no word about the separators
    from loe_viz.data import sample_path

    path = sample_path("european_capitals.csv")
    with pytest.raises(ValueError) as exc:
        read_triplets(path)
    assert str(exc.value) == (
        f"{path}: line 1: is not a triplet file: its first line ['name', 'country', 'latitude', 'longitude'] names "
        "columns, none of them a triplet's (head, winner, loser; or head, left, right, winner), above rows that hold "
        "numbers; a triplet file names items, three to a row")
    # the bundled points and map files were refused in two other wordings, neither saying what the file is
    for sample, cells in (("gaussian_2d_points.csv", "['x', 'y']"), ("european_capitals_map_km.csv",
                                                                     "['east_km', 'north_km']")):
        with pytest.raises(ValueError) as exc:
            read_triplets(sample_path(sample))
        assert str(exc.value) == (f"{sample_path(sample)}: line 1: is not a triplet file: its first line {cells} names "
                                  "columns, none of them a triplet's (head, winner, loser; or head, left, right, "
                                  "winner), above rows that hold numbers; a triplet file names items, three to a row")
    for text, line in (("0 1\t3\n1 2\t0\n", 1), ("0\t1\t3\n1 2\t0\n", 2)):
        with pytest.raises(ValueError) as exc:
            read_triplets(io.StringIO(text))
        assert str(exc.value).startswith(f"<buffer>: line {line}: expected 3 fields (head, near, far), got 2; a field "
                                         "holds numbers separated by spaces, so the file mixes spaces and tabs as "
                                         "separators: use one throughout (delimiter=' ' splits on any run of spaces "
                                         "and tabs)"), str(exc.value)
    assert read_triplets(io.StringIO("0 1\t3\n1 2\t0\n"), delimiter=" ").triplets.tolist() == [[0, 1, 3], [1, 2, 0]]
    # a first line of words above words (labels) is still read as the header it may be, or as items
    assert read_triplets(io.StringIO("a,b,c\nb,c,a\n"), header=False).n_triplets == 2


def test_the_embedding_table_quotes_labels_with_a_hash_and_reads_back_exactly():
    """`loe-viz embed` and the explorer's download write it: a label '#ff0000' went out bare, and read with
    comment='#' (or by this package's readers) its row lost the label and the coordinates."""
    import pandas as pd

    from loe_viz.io.writing import write_embedding_table

    Z = np.random.default_rng(3).normal(size=(4, 2)) / 3
    cov = np.einsum("nij,nkj->nik", *[np.random.default_rng(4).normal(size=(4, 2, 2))] * 2)
    for labels, shown in [(np.array(["#ff0000", "rock #1", "=1+1", "plain"], dtype=object),
                           ['"#ff0000"', '"rock #1"', "'=1+1", "plain"]),
                          (np.array(["Lyon\rNice", "a\nb", "x\r\ny", "plain"], dtype=object),  # '\r' went out bare
                           ['"Lyon\rNice"', None, None, "plain"]),
                          (np.array([3, 8, 10, 12]), ["3", "8", "10", "12"])]:
        buf = io.StringIO()
        write_embedding_table(buf, Z, labels, cov)
        lines = buf.getvalue().split("\n")
        assert lines[0] == "item,label,x1,x2,cov_x1_x1,cov_x1_x2,cov_x2_x2"
        if None not in shown:
            assert [ln.split(",")[1] for ln in lines[1:-1]] == shown
        table = pd.read_csv(io.StringIO(buf.getvalue()), comment="#")
        assert table["label"].astype(str).tolist() == [str(v).replace("=", "'=", 1) if str(v).startswith("=")
                                                         else str(v) for v in labels]
        np.testing.assert_array_equal(table[["x1", "x2"]].to_numpy(), Z)
        np.testing.assert_array_equal(table["cov_x1_x2"].to_numpy(), cov[:, 0, 1])


@pytest.mark.parametrize("first", ["Nan", "Inf", "infinity"])
def test_a_first_id_that_reads_as_a_float_word_is_told_it_may_be_a_label(first):
    """'Nan' (a person) or 'Inf' first in a file of names was 'non-integer item index' with no way out but
    skipping that item's rows, though item_type='str' reads the file."""
    text = f"head,winner,loser\n{first},Bob,Alice\nBob,{first},Alice\n"
    with pytest.raises(ValueError, match=rf"^<buffer>: line 2: non-integer item index '{first}' in the head column; "
                                         r"pass item_type='str' if it is a label; errors='skip' drops"):
        read_text(text)
    assert sorted(read_text(text, item_type="str").labels) == ["Alice", "Bob", first]
    with pytest.raises(ValueError, match=r"non-integer item index '1\.5' in the head column; errors='skip'"):
        read_text("head,winner,loser\n1.5,2,3\n")  # a number: no such advice
