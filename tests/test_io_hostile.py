"""Hostile and tricky triplet files: memory bounds before allocating, and reader correctness.

Every large-declaring file is generated at test time and stays small on disk; the
peak of traced allocations (NumPy's included) while reading it is bounded.
"""

from __future__ import annotations

import io
import os
import re
import stat
import subprocess
import sys
import threading
import tracemalloc
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loe_viz.io as lio
from loe_viz.io import read_triplets, spreadsheet_safe, write_triplets

MB = 2**20


def peak_while(fn):
    """(result or exception, peak traced bytes) of ``fn()``; pandas is imported first, not counted."""
    import pandas  # noqa: F401

    tracemalloc.start()
    try:
        out = fn()
    except Exception as exc:  # noqa: BLE001 - the caller inspects it
        out = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, peak


def npy_header(shape, dtype="<i4") -> bytes:
    """A valid .npy version 1.0 header declaring ``shape`` (no data)."""
    bio = io.BytesIO()
    np.lib.format.write_array_header_1_0(bio, {"descr": dtype, "fortran_order": False, "shape": shape})
    return bio.getvalue()


# ----------------------------------------------------------------------------- issue 10, section 2

def test_one_huge_label_is_not_amplified(tmp_path):
    """2,000 rows and one 262,144-character label (a 288 KiB file) were a 2 GiB fixed-width array."""
    rows = [f"a{i % 50},a{(i + 1) % 50},a{(i + 2) % 50}" for i in range(2000)]
    rows.append("a1,a2," + "x" * 262_144)
    path = tmp_path / "huge_label.csv"
    path.write_text("\n".join(rows) + "\n")
    assert path.stat().st_size < 300 * 1024
    data, peak = peak_while(lambda: read_triplets(path))
    assert data.n_items == 51 and data.labels.dtype == object
    assert max(map(len, data.labels.tolist())) == 262_144
    assert peak < 30 * MB, peak  # the old reader's labels array alone took 2,001 MiB
    with pytest.raises(ValueError, match=r"huge_label\.csv: the text labels exceed the limit of 100,000 characters"
                                         r".*limits=\{'label_bytes'.*MAX_LABEL_BYTES"):
        read_triplets(path, limits={"label_bytes": 100_000})
    with path.open("a") as fh:  # a problem after the huge label is still found on its line
        fh.write("a3,a3,a4\n")
    with pytest.raises(ValueError, match=r"line 2002: the row repeats an item \('a3', 'a3', 'a4'\)"):
        read_triplets(path)


def test_one_huge_label_is_not_amplified_when_written():
    """300 labels, one of 262,144 characters: a fixed-width array of them would take 300 MiB."""
    labels = ["x" * 262_144] + [f"a{i}" for i in range(299)]
    triplets = np.array([[0, 1, 2], [3, 4, 5], [299, 0, 7]])
    bio = io.BytesIO()
    out, peak = peak_while(lambda: write_triplets(bio, triplets, labels=labels, layout="crowd"))
    assert out is None and peak < 30 * MB, (out, peak)
    assert read_triplets(io.BytesIO(bio.getvalue())).n_items == 8


def test_one_huge_label_in_the_labels_argument_is_not_amplified():
    """labels= with 2,000 labels, one of 262,144 characters: a fixed-width array of them would take 2 GiB."""
    labels = ["x" * 262_144] + [f"a{i}" for i in range(1999)]
    data, peak = peak_while(lambda: read_triplets(io.StringIO("a1,a2,a3\na3,a1,a2\n"), labels=labels))
    assert data.labels.dtype == object and data.labelled().tolist() == [["a1", "a2", "a3"], ["a3", "a1", "a2"]]
    assert peak < 30 * MB, peak
    with pytest.raises(ValueError, match=r"^labels must be a 1-D sequence of at least 3 strings or integers"):
        read_triplets(io.StringIO("0,1,2\n"), labels=[-1, 0, 1])


def test_blank_first_lines_do_not_declare_a_huge_table(tmp_path):
    # The integer reader sizes its table from the first block's line count; a block of blank lines
    # (one byte a line) must not reserve 12 bytes a line for a table that cannot hold a row each.
    path = tmp_path / "blank.csv"
    path.write_bytes(b"1,2,3\n" + b"\n" * (4 * MB))
    read_triplets(io.StringIO("1,2,3\n"))  # the compiled reader loaded before measuring
    out, peak = peak_while(lambda: read_triplets(path))
    assert peak < 10 * 4 * MB, f"traced peak {peak / MB:.1f} MiB for a 4 MiB file"  # 12x before
    assert not isinstance(out, Exception), out


def test_npy_header_claiming_1e11_rows_is_refused_before_allocating(tmp_path):
    path = tmp_path / "claims.npy"
    path.write_bytes(npy_header((10**11, 3), "<i8") + b"\0" * 48)
    err, peak = peak_while(lambda: read_triplets(path))
    assert isinstance(err, ValueError), err
    msg = str(err)
    assert "claims.npy: the array, declared with shape (100000000000, 3)" in msg
    assert "2,400,000,000,000 bytes, above the limit of 1,073,741,824" in msg
    assert "limits={'array_bytes': ...}" in msg and "loe_viz.io.MAX_ARRAY_BYTES" in msg
    assert peak < 1 * MB
    # Raising the limit does not make the reader trust the header: the data is not there.
    with pytest.raises(ValueError, match=r"declares shape \(100000000000, 3\).*but only 48 follow"):
        read_triplets(path, limits={"array_bytes": 10**13})


def test_npz_member_declaring_2e8_rows_is_refused_before_allocating(tmp_path):
    """A member whose .npy header claims (2e8, 3) int32 (2.4 GB): refused from the header alone."""
    path = tmp_path / "claims.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("X.npy", npy_header((200_000_000, 3)) + b"\0" * 1024)
        zf.writestr("y.npy", npy_header((200_000_000,), "|b1"))
    err, peak = peak_while(lambda: read_triplets(path))
    assert isinstance(err, ValueError), err
    assert "claims.npz: X, declared with shape (200000000, 3) and dtype int32, is 2,400,000,000 bytes" in str(err)
    assert peak < 1 * MB


def test_npz_zip_bomb_is_refused_by_its_compression_ratio(tmp_path):
    """A real (2e7, 3) int32 member of zeros: 240 MB that deflate into a quarter of a megabyte."""
    path = tmp_path / "bomb.npz"
    n = 20_000_000
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("triplets.npy", "w", force_zip64=True) as f:
        f.write(npy_header((n, 3)))
        zeros = bytes(4 * MB)
        for _ in range(n * 12 // len(zeros)):
            f.write(zeros)
    assert path.stat().st_size < 1 * MB
    err, peak = peak_while(lambda: read_triplets(path))
    assert isinstance(err, ValueError), err
    assert "bomb.npz: the expansion of the member 'triplets' (" in str(err)
    assert re.search(r" bytes\) is [0-9,]+ times, above the limit of 32 ", str(err)) and "MAX_COMPRESSION_RATIO" in str(err)
    assert peak < 1 * MB


def test_fixed_width_labels_member_is_bounded(tmp_path):
    """2,000 labels stored as <U262144 declare 2 GiB: refused by the array limit, not allocated."""
    path = tmp_path / "labels.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("triplets.npy", npy_header((1, 3), "<i8") + np.array([[0, 1, 2]], "<i8").tobytes())
        zf.writestr("labels.npy", npy_header((2000,), "<U262144"))
    err, peak = peak_while(lambda: read_triplets(path))
    assert isinstance(err, ValueError) and "labels, declared with shape (2000,)" in str(err), err
    assert peak < 1 * MB


def test_truncated_npy_gives_a_clear_error(tmp_path):
    path = tmp_path / "short.npy"
    path.write_bytes(npy_header((1000, 3), "<i8") + b"\0" * 100)
    with pytest.raises(ValueError, match=r"short\.npy: the array is not a valid NumPy array .*24,000 bytes"):
        read_triplets(path)


@pytest.mark.parametrize("member", [False, True])
def test_npy_header_with_an_unbalanced_bracket_gives_a_clear_error(tmp_path, member):
    """NumPy tokenizes the header dict; an unclosed '(' raised tokenize.TokenError through the reader (found by
    fuzzing), a traceback in the command line."""
    header = b"{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3, }"
    raw = b"\x93NUMPY\x01\x00" + len(header + b"\n").to_bytes(2, "little") + header + b"\n" + bytes(48)
    path = tmp_path / ("bad.npz" if member else "bad.npy")
    if member:
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("triplets.npy", raw)
    else:
        path.write_bytes(raw)
    what = "triplets" if member else "the array"
    message = rf"^{re.escape(str(path))}: {what} is not a valid NumPy array \(its header is not a Python dict: EOF "
    with pytest.raises(ValueError, match=message):
        read_triplets(path)


def test_module_constant_raises_the_limit(tmp_path, monkeypatch):
    path = tmp_path / "t.npy"
    write_triplets(path, [[0, 1, 2], [1, 2, 0]])
    monkeypatch.setattr(lio, "MAX_ARRAY_BYTES", 16)
    with pytest.raises(ValueError, match=r"is 24 bytes, above the limit of 16"):
        read_triplets(path)
    assert read_triplets(path, limits={"array_bytes": 24}).triplets.tolist() == [[0, 1, 2], [1, 2, 0]]
    with pytest.raises(ValueError, match="^limits must map array_bytes"):
        read_triplets(path, limits={"rows": 3})


# ----------------------------------------------------------------------------- issue 10, section 9

def test_labels_only_file_keeps_its_first_row_and_column_order():
    text = "j,i,k\nk,j,l\nl,k,j\n"
    data = read_triplets(io.StringIO(text))
    assert data.labelled().tolist() == [["j", "i", "k"], ["k", "j", "l"], ["l", "k", "j"]]
    assert any("first line 'j,i,k' was read as data" in n for n in data.notes)
    forced = read_triplets(io.StringIO(text), header=True)  # asked for: the header's order, and said so
    assert forced.labelled().tolist() == [["j", "k", "l"], ["k", "l", "j"]]
    assert any("columns taken by their header names" in n for n in forced.notes)


@pytest.mark.parametrize("token", ["1_0", "\uff11", "\u0661", "1e\uff13"])
def test_only_ascii_digits_are_numbers(token):
    with pytest.raises(ValueError, match=f"line 2: mixed types: head item '{token}' is not an integer"):
        read_triplets(io.StringIO(f"0,1,2\n{token},2,3\n"))
    data = read_triplets(io.StringIO(f"a,b,c\n{token},b,c\n"))  # among text labels it is a label
    assert token.strip() in data.labels.tolist()


@pytest.mark.parametrize("name", ["t.csv", "t.tsv", "t.npz"])
def test_everything_written_reads_back(tmp_path, name):
    T = np.array([[0, 1, 2], [2, 3, 1], [3, 0, 2]])
    ids = [2**40, 2**63 - 1, 7, 3_000_000_000]
    write_triplets(tmp_path / name, T, labels=ids)
    data = read_triplets(tmp_path / name)
    assert data.labelled().tolist() == np.array(ids)[T].tolist()
    odd = ["=1+1", "@SUM(A1)", "+", "-x", "a\"b", "c,d", "Zürich"]
    if name != "t.npz":
        write_triplets(tmp_path / name, [[0, 1, 2], [3, 4, 5], [6, 0, 1]], labels=odd, layout="crowd")
        assert sorted(read_triplets(tmp_path / name).labels.tolist()) == sorted(odd)


def test_npz_member_that_is_not_an_array(tmp_path):
    for member in ("triplets.npy", "triplets"):
        path = tmp_path / "odd.npz"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(member, b"0,1,2\n")
        with pytest.raises(ValueError, match=r"odd\.npz: the member 'triplets' is not a NumPy array"):
            read_triplets(path)


def test_unterminated_quote_is_named():
    with pytest.raises(ValueError, match='line 3: an unterminated quote: a field opened with " on this line'):
        read_triplets(io.StringIO('a,b,c\nb,c,a\n"c,a,b\nc,b,a\n'))


def test_too_many_fields_on_the_first_row_is_not_dropped():
    with pytest.raises(ValueError, match=r"line 2: expected 3 fields .*got 4"):
        read_triplets(io.StringIO("i,j,k\n0,1,2,3\n1,2,0\n"))
    data = read_triplets(io.StringIO("i,j,k\n0,1,2,3\n1,2,0\n2,0,1\n"), errors="skip")
    assert data.triplets.tolist() == [[1, 2, 0], [2, 0, 1]] and data.n_skipped == 1


@pytest.mark.parametrize("cell,safe", [("=1+1", "'=1+1"), ("+", "'+"), ("-", "'-"), ("@x", "'@x"),
                                       ("\tx", "'\tx"), ("Paris", "Paris"), ("a=b", "a=b"), (7, "7")])
def test_spreadsheet_safe(cell, safe):
    assert spreadsheet_safe(cell) == safe


def test_embedding_export_neutralises_formulas():
    from loe_viz.app.triplets_state import TripletsState

    s = TripletsState()
    assert s.load_upload(b"head,winner,loser\n=1+1,@b,+c\n@b,+c,=1+1\n+c,=1+1,@b\n-d,=1+1,@b\n", "f.csv"), s.error
    csv_text = _fake_result(s)
    cells = [line.split(",")[1] for line in csv_text.splitlines()[1:]]  # below the header
    assert sorted(cells) == ["'+c", "'-d", "'=1+1", "'@b"]


def _fake_result(s):
    from types import SimpleNamespace

    Z = np.zeros((s.data.n_items, 2))
    s.results = {"loe": SimpleNamespace(ok=True, embedding=Z, label="LOE", test_accuracy=1.0)}
    return s.embedding_csv("loe")


# ----------------------------------------------------------------------------- issue 10, section 10

def test_write_atomic_honours_the_umask_without_changing_it(tmp_path, monkeypatch):
    old = os.umask(0o027)
    try:
        def no_umask(mask):
            raise AssertionError("os.umask called while writing")

        monkeypatch.setattr(os, "umask", no_umask)
        write_triplets(tmp_path / "new.csv", [[0, 1, 2]])
        assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == 0o640
        os.chmod(tmp_path / "new.csv", 0o604)
        write_triplets(tmp_path / "new.csv", [[0, 2, 1]])  # a replaced file keeps its mode
        assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == 0o604
    finally:
        monkeypatch.undo()
        os.umask(old)
    assert sorted(os.listdir(tmp_path)) == ["new.csv"]


def test_write_keeps_a_symlink_and_writes_a_pipe_in_place(tmp_path):
    target, link = tmp_path / "target.csv", tmp_path / "link.csv"
    target.write_text("old\n")
    link.symlink_to(target.name)
    write_triplets(link, [[0, 1, 2]])
    assert link.is_symlink() and read_triplets(target).triplets.tolist() == [[0, 1, 2]]
    assert sorted(os.listdir(tmp_path)) == ["link.csv", "target.csv"]
    fifo, got = tmp_path / "out.csv", []
    os.mkfifo(fifo)
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_triplets(fifo, [[2, 1, 0]])  # written into the pipe, not replaced by a regular file beside it
    reader.join(10)
    assert got == [b"head,winner,loser\n2,1,0\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    redirected = tmp_path / "stdout.txt"  # /dev/stdout redirected to a file: appended to, never replaced
    with open(redirected, "wb") as fh:
        fh.write(b"before\n")
        fh.flush()
        inode = os.fstat(fh.fileno()).st_ino
        code = "from loe_viz.io import write_triplets; write_triplets('/dev/stdout', [[0, 1, 2]])"
        subprocess.run([sys.executable, "-c", code], stdout=fh, check=True, timeout=120)
    assert redirected.read_bytes() == b"before\nhead,winner,loser\n0,1,2\n" and redirected.stat().st_ino == inode
    with pytest.raises(FileNotFoundError) as info:  # the message names the path asked for, not a temporary file
        write_triplets(tmp_path / "no" / "t.csv", [[0, 1, 2]])
    assert info.value.filename == str(tmp_path / "no" / "t.csv")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(min_size=1, max_size=12), min_size=3, max_size=6, unique=True) |
       st.lists(st.integers(0, 2**63 - 1), min_size=3, max_size=6, unique=True),
       st.sampled_from(["list-order", "crowd", "list-boolean", "list-count"]), st.sampled_from(["csv", "tsv"]),
       st.integers(0, 2**32 - 1))
def test_fuzz_whatever_is_written_reads_back(labels, layout, fmt, seed):
    rng = np.random.default_rng(seed)
    T = np.array([rng.choice(len(labels), 3, replace=False) for _ in range(8)])
    buf = io.BytesIO()
    buf.name = f"t.{fmt}"
    try:
        write_triplets(buf, T, labels=labels, layout=layout)
    except ValueError:
        return  # labels the writer refuses (numbers as text, '#...', surrounding whitespace...)
    data = read_triplets(io.BytesIO(buf.getvalue()))
    assert data.labelled().tolist() == np.array(labels, dtype=object)[T].tolist()


@pytest.mark.parametrize("layout, labels", [
    ("list-boolean", [":", ";", "y"]),  # found by the fuzz test above: 'y' was both a label and the header's
    ("list-order", ["head", "winner", "loser", "loser_id"]),
    ("crowd", ["left", "right", "winner", "Paris"]),
])
def test_labels_named_like_the_header_columns_read_back(layout, labels):
    # The reader takes a first line whose cells are items of the file for data ('j,i,k' above 'k,j,l'),
    # so the writer spells a column another way when a label takes its name.
    T = np.array([[0, 1, 2], [2, 0, 1], [1, 2, 0]])
    buf = io.BytesIO()
    write_triplets(buf, T, labels=labels, layout=layout)
    header = buf.getvalue().decode().splitlines()[0].split(",")
    assert not set(header) & set(labels)
    data = read_triplets(io.BytesIO(buf.getvalue()))
    assert data.layout == layout
    assert data.labelled().tolist() == np.array(labels, dtype=object)[T].tolist()


def test_labels_that_take_every_spelling_of_a_column_are_refused():
    labels = ["y", "y_id", "y_item", "y_label", "y_name"]
    with pytest.raises(ValueError, match="^the labels take every spelling of the header column 'y'; write with "
                                         "header=False and read the file back with layout=$"):
        write_triplets(io.BytesIO(), [[0, 1, 2]], labels=labels, layout="list-boolean")
    buf = io.BytesIO()
    write_triplets(buf, [[0, 1, 2]], labels=labels, layout="list-boolean", header=False)
    assert read_triplets(io.BytesIO(buf.getvalue()), layout="list-boolean").labelled().tolist() == [["y", "y_id", "y_item"]]


def test_command_line_export_neutralises_formulas(tmp_path):
    from loe_viz.cli import _write_embedding

    out = tmp_path / "emb.csv"
    _write_embedding(str(out), np.zeros((3, 2)), np.array(["=1+1", "@b", "Paris"], dtype=object))
    assert [line.split(",")[1] for line in out.read_text().splitlines()[1:]] == ["'=1+1", "'@b", "Paris"]


# ----------------------------------------------------------------------------- quoted fields over line breaks
def test_a_quoted_field_over_line_breaks_is_named_at_the_line_that_opens_it():
    """Found by fuzzing: a quote opened on line 1 and closed on line 5 made pandas read lines 1-5 as one row,
    and the reader's line walk then met an empty line (IndexError)."""
    data = b'"a\x011\x010 1 2\n3 4 5\n# c\n\n0 1 it,n1e-"f'
    for kw in ({}, {"item_type": "str"}, {"errors": "skip"}):
        with pytest.raises(ValueError, match=r'^<buffer>: line 1: a quoted field runs over a line break: the " that '
                                             r"opens it on this line closes on line 5; quote each field on its line "
                                             r"\(an item label cannot contain a line break\)$"):
            read_triplets(io.BytesIO(data), **kw)
    with pytest.raises(ValueError, match=r'^<buffer>: line 2: an unterminated quote: a field opened with " on this '
                                         r"line is never closed \(it runs to the end of the file\)$"):
        read_triplets(io.BytesIO(b'a,b,c\n"d,e,f\ng,h,i\n'))


def test_after_the_sniffed_lines_a_quoted_field_over_a_line_break_keeps_the_line_numbers_right():
    good = b"".join(b"a%d,b%d,c%d\n" % (i, i, i) for i in range(60))  # past the 50 lines the sniffer reads
    data = good + b'"d\ne",f,g\nh,i,j\nk,k,l\n'
    with pytest.raises(ValueError, match=r"^<buffer>: line 61: the quoted head item 'd\\ne' runs over a line break;"):
        read_triplets(io.BytesIO(data))
    got = read_triplets(io.BytesIO(data), errors="skip")
    assert got.n_triplets == 61 and got.n_skipped == 2
    # the repeated item is on line 64: the record of lines 61-62 counts as two lines (it said line 63 before)
    assert "line 61: the quoted head item" in got.notes[-1] and "line 64: the row repeats an item" in got.notes[-1]


def test_a_quote_inside_a_field_is_a_character_of_the_label():
    got = read_triplets(io.BytesIO(b"a,b,c\n5'11\",f,g\nh,i,j\n"))
    assert got.labelled().tolist()[1] == ["5'11\"", "f", "g"]


def test_a_number_among_text_categories_is_read_as_text():
    """Found by fuzzing: pandas typed a 42-digit cell as a Python int among the text categories, and the reader
    failed with AttributeError; the cells are now read again as text and the row's problem is named."""
    data = b"1" * 42 + b"#1111,\n"
    with pytest.raises(ValueError, match=r"^<buffer>: line 1: expected 3 fields \(head, near, far\), got 1 \('#' "
                                         r"starts a comment: quote labels that contain it\); errors='skip' drops the "
                                         r"rows with problems$"):
        read_triplets(io.BytesIO(data), columns="head,near,far")
    got = read_triplets(io.BytesIO(b"a,b,c\n" + b"9" * 30 + b",b,c\n"), item_type="str")
    assert got.labels.tolist() == ["9" * 30, "a", "b", "c"]


def test_a_three_number_file_cannot_declare_two_billion_items():
    """Found by fuzzing: with relabel=False (or n_items) every index up to the largest is an item, and a 14-byte
    file made 15 GB of labels; the labels now count against the array limit before they are allocated."""
    err, peak = peak_while(lambda: read_triplets(io.StringIO("0,1,2000000000\n"), relabel=False))
    assert isinstance(err, ValueError), err
    assert str(err) == ("<buffer>: with relabel=False every id up to the largest, 2,000,000,000, is an item "
                        "(relabel='auto' numbers only the ids that appear), and their labels take 16,000,000,008 "
                        "bytes, above the limit of 1,073,741,824 bytes (raise it with read_triplets(..., "
                        "limits={'array_bytes': ...}) or loe_viz.io.MAX_ARRAY_BYTES)")
    assert peak < 1 * MB
    with pytest.raises(ValueError, match=r"^<buffer>: n_items=200,000,000: the labels of its items take "
                                         r"1,600,000,000 bytes, above the limit of 1,073,741,824 bytes "):
        read_triplets(io.StringIO("0,1,2\n"), n_items=200_000_000)
    # the same ids numbered by relabel="auto", and a limit raised for a real need
    assert read_triplets(io.StringIO("0,1,2000000000\n")).n_items == 3
    got = read_triplets(io.StringIO("0,1,2\n"), n_items=1000, limits={"array_bytes": 8000})
    assert got.n_items == 1000 and got.labels.tolist() == list(range(1000))
    with pytest.raises(ValueError, match=r"n_items=1,001: .* 8,008 bytes, above the limit of 8,000 "):
        read_triplets(io.StringIO("0,1,2\n"), n_items=1001, limits={"array_bytes": 8000})


@pytest.mark.parametrize("labels", [{"Paris", "Rome", "Oslo"}, frozenset({"Paris", "Rome", "Oslo"}),
                                    {"Paris": 0, "Rome": 1, "Oslo": 2}])
def test_labels_without_an_index_order_are_refused(labels):
    """labels[i] names item i: a set was written in its hash order (a different file in each Python process,
    found by trying odd arguments), and a dict does not say whether its keys or its values are the labels."""
    what = type(labels).__name__
    message = rf"^labels must list the items in index order \(a list, tuple or array\), got a {what}$"
    with pytest.raises(ValueError, match=message):
        write_triplets(io.BytesIO(), [[0, 1, 2]], labels=labels)
    with pytest.raises(ValueError, match=message):
        read_triplets(io.StringIO("Paris,Rome,Oslo\n"), labels=labels)
    buf = io.BytesIO()
    write_triplets(buf, [[0, 1, 2]], labels=("Paris", "Rome", "Oslo"))  # a tuple, a generator, an array: in order
    assert buf.getvalue() == b"head,winner,loser\nParis,Rome,Oslo\n"


def test_an_npz_member_with_damaged_compressed_data_gives_a_clear_error(tmp_path):
    """Found by fuzzing: a damaged deflate stream raised zlib.error through the reader (zipfile checks the CRC only
    once a member is read to its end)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        arr = io.BytesIO()
        np.save(arr, np.array([[0, 1, 2], [1, 2, 3]] * 50))
        zf.writestr("triplets.npy", arr.getvalue())
    raw = bytearray(buf.getvalue())
    start = 30 + int.from_bytes(raw[26:28], "little") + int.from_bytes(raw[28:30], "little")  # the member's data
    raw[start] = 0xFF  # a deflate block of the reserved type
    path = tmp_path / "damaged.npz"
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"^.*damaged\.npz: the member 'triplets' cannot be read \(its compressed "
                                         r"data is damaged: Error -3 while decompressing data: invalid block type\)$"):
        read_triplets(path)


def test_an_npz_whose_x_and_y_are_scalars_is_refused_by_its_shape(tmp_path):
    """Found by fuzzing: 0-d X and y passed the check that y has a row per row of X, and y's first bad row was then
    looked up in a scalar (IndexError)."""
    path = tmp_path / "scalars.npz"
    np.savez(path, X=np.array(5), y=np.array(7))
    with pytest.raises(ValueError, match=r"^.*scalars\.npz: X must have shape \(m, 3\), got \(\)$"):
        read_triplets(path)


@pytest.mark.parametrize("code", [0x110000, 0xD800])
def test_text_labels_that_are_no_unicode_characters_are_refused(tmp_path, code):
    """Found by fuzzing: a '<U' labels array is 32-bit numbers, and one above U+10FFFF made NumPy's tolist() raise
    SystemError; a surrogate would have been read, and failed later when a label was written as UTF-8."""
    labels = np.frombuffer(np.array([ord("a"), ord("b"), code], "<u4").tobytes(), "<U1")
    path = tmp_path / "odd_labels.npz"
    np.savez(path, triplets=np.array([[0, 1, 2]]), labels=labels)
    with pytest.raises(ValueError, match=r"^.*odd_labels\.npz: labels hold numbers that are no Unicode characters "
                                         r"\(above U\+10FFFF, or surrogates\)$"):
        read_triplets(path)
    np.savez(path, triplets=np.array([[0, 1, 2]]), labels=np.array(["a", "b", "\U0010ffff"], ">U1"))
    assert read_triplets(path).labelled().tolist() == [["a", "b", "\U0010ffff"]]  # the largest, big-endian: read


@pytest.mark.parametrize("names", [("triplets.npy", "triplets.npy"), ("triplets", "triplets.npy")])
def test_an_npz_holding_two_arrays_of_one_name_is_refused(tmp_path, names):
    """A zip archive may hold two members of one name; the reader took the last one, NumPy's np.load lists both,
    and another tool may take the first: the same file would then mean different triplets to each."""
    path = tmp_path / "twice.npz"
    with zipfile.ZipFile(path, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile's "Duplicate name"
        for name, arr in zip(names, ([[0, 1, 2]], [[2, 1, 0], [0, 2, 1]])):
            with zf.open(name, "w") as fh:
                np.lib.format.write_array(fh, np.array(arr))
    with pytest.raises(ValueError, match=r"^.*twice\.npz: holds more than one array named 'triplets'; an \.npz "
                                         r"holds each array once$"):
        read_triplets(path)


# ------------------------------------------------------------------ a server reads uploads with these
@pytest.mark.parametrize("line, fields", [(b"," * 2_000_000, 2_000_001), (b"0\t" * 500_000, 500_001),
                                          (b"x " * 300_000, 300_000)])
def test_a_line_of_millions_of_fields_is_refused_before_it_is_split(line, fields):
    """A 10 MB line of commas took 35 s to refuse (each field was matched against every column name), holding a
    served explorer's event loop the whole time; refused now before any split, in a count of characters."""
    raw = line + b"\n0,1,2\n1,2,0\n"  # the first line, which is sniffed (a later one is pandas' to read)
    calls = []
    import loe_viz.io.layouts as layouts

    orig = layouts.name_role
    layouts.name_role = lambda *a: calls.append(1) or orig(*a)
    try:
        with pytest.raises(ValueError, match=rf"^<buffer>: line 1: {fields:,} fields on one line; a triplet file "
                                             r"has 3 or 4 columns \(at most 1,000 with the ones to ignore\): is this "
                                             r"a triplet file\?$"):
            read_triplets(io.BytesIO(raw))
    finally:
        layouts.name_role = orig
    assert calls == []  # nothing was matched against the column names
    wide = b"head,winner,loser" + b",x" * 900 + b"\n0,1,2" + b",1" * 900 + b"\n"  # 903 columns: read
    assert read_triplets(io.BytesIO(wide)).triplets.tolist() == [[0, 1, 2]]
    label = b"a,b," + b"w " * 2000 + b"\nb,a,c\n"  # a label of 2,000 words in a comma-separated file: read
    assert read_triplets(io.BytesIO(label)).n_items == 4


def test_an_archive_of_thousands_of_arrays_lists_a_few_names():
    """The message listed all 5,000 names: 59,000 characters in the explorer's error box."""
    buf = io.BytesIO()
    np.savez(buf, *[np.zeros(1)] * 5000)
    with pytest.raises(ValueError, match=r"^<buffer>: has the arrays \['arr_0', 'arr_1', 'arr_10', 'arr_100', "
                                         r"'arr_1000', 'arr_1001', 'arr_1002', 'arr_1003', 'arr_1004', 'arr_1005'\] "
                                         r"and 4,990 more; expected 'triplets', or 'X' and 'y' \(optionally "
                                         r"'labels'\)$"):
        read_triplets(io.BytesIO(buf.getvalue()))


def test_a_npy_header_holding_code_is_named_without_a_memory_address():
    header = b"{'descr': __import__('os').getpid(), 'fortran_order': False, 'shape': (1, 3), }"
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    raw = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(12)
    with pytest.raises(ValueError, match=r"^<buffer>: the array is not a valid NumPy array \(its header is not a "
                                         r"Python dict of plain values: it holds a Call expression\)$"):
        read_triplets(io.BytesIO(raw))


def test_a_pipe_is_refused_by_name_without_waiting_for_a_writer(tmp_path):
    """/dev/stdin fed by a pipe (or a shell's <(zcat ...)) failed with 'OSError: [Errno 29] Illegal seek', no file
    named; a named pipe without a writer made the reader wait for ever in open()."""
    expected = ("is a pipe or terminal, not a file: the reader goes back to its start after sniffing it; save the "
                "triplets to a file and read that")
    fifo, outcome = tmp_path / "answers.csv", []
    os.mkfifo(fifo)

    def read():
        try:
            read_triplets(fifo)
        except ValueError as exc:
            outcome.append(str(exc))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)
    if reader.is_alive():  # unblock the open() it waits in
        with open(fifo, "wb"):
            pass
    assert outcome == [f"{fifo}: {expected}"]
    r, w = os.pipe()
    try:
        os.write(w, b"head,winner,loser\n0,1,2\n1,2,0\n")
        os.close(w)
        with pytest.raises(ValueError, match=re.escape(f"/dev/fd/{r}: {expected}")):
            read_triplets(f"/dev/fd/{r}")
    finally:
        os.close(r)


def test_large_ids_read_from_a_numpy_file_as_from_a_text_file(tmp_path):
    """A .npy of ids beyond int32 was refused ('too large for the reader (ids below 2**31 - 2)') where the same ids
    in a CSV were numbered 0..k-1: both now read the same, and only ids from 2**63 on, or relabel=False, refuse."""
    ids = np.array([[0, 7, 2**40], [7, 2**40, 0], [2**40, 0, 2**62], [2**62, 7, 0]], dtype=np.int64)
    np.save(tmp_path / "t.npy", ids)
    np.savetxt(tmp_path / "t.csv", ids, fmt="%d", delimiter=",")
    a, b = read_triplets(tmp_path / "t.npy"), read_triplets(tmp_path / "t.csv")
    np.testing.assert_array_equal(a.triplets, b.triplets)
    np.testing.assert_array_equal(a.labels, [0, 7, 2**40, 2**62])
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.triplets.dtype == np.int32 and a.n_items == 4 and a.notes == b.notes
    np.save(tmp_path / "u.npy", np.array([[0, 1, 2], [0, 1, 2**64 - 1]], dtype=np.uint64))
    with pytest.raises(ValueError) as info:
        read_triplets(tmp_path / "u.npy")
    assert str(info.value) == (f"{tmp_path / 'u.npy'}: the array row 1 (counting from 0) holds index "
                               "18446744073709551615, too large for the reader (ids below 2**63): [0, 1, "
                               "18446744073709551615]")
    with pytest.raises(ValueError) as info:
        read_triplets(tmp_path / "t.npy", relabel=False)
    assert str(info.value) == (f"{tmp_path / 't.npy'}: the array row 0 (counting from 0) holds index 1099511627776, "
                               "too large for relabel=False (ids below 2**31 - 2 = 2,147,483,646): [0, 7, "
                               "1099511627776]")
