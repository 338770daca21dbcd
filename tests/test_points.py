"""Ground-truth generators and the CSV point loader."""

import io

import numpy as np
import pytest
from scipy.spatial.distance import pdist

from loe_viz.points import POINT_KINDS, load_points, make_points

MIN_DIM = {"moons": 2, "spiral": 2, "circle": 2, "swiss_roll": 3}


# --------------------------------------------------------------------------- make_points
def test_point_kinds_listed():
    assert set(POINT_KINDS) == {"gaussian", "uniform", "circle", "blobs", "moons", "spiral", "grid", "swiss_roll"}


@pytest.mark.parametrize("kind", POINT_KINDS)
@pytest.mark.parametrize("n", [2, 3, 7, 150])
def test_every_kind_shape_dtype_finite(kind, n):
    for d in sorted({MIN_DIM.get(kind, 1), 3, 5} - set(range(MIN_DIM.get(kind, 1)))):
        X = make_points(kind, n, d=d, random_state=1)
        assert X.shape == (n, d)
        assert X.dtype == np.float64 and X.flags.c_contiguous
        assert np.isfinite(X).all()
        if n >= 3:
            # no generator collapses onto a single point
            assert np.ptp(X, axis=0).max() > 0


@pytest.mark.parametrize("kind", POINT_KINDS)
def test_seeded_determinism(kind):
    d = max(MIN_DIM.get(kind, 1), 2)
    a = make_points(kind, 120, d=d, random_state=3)
    b = make_points(kind, 120, d=d, random_state=3)
    c = make_points(kind, 120, d=d, random_state=4)
    g = make_points(kind, 120, d=d, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, g)
    assert not np.array_equal(a, c)


@pytest.mark.parametrize("d", [1, 2, 5, 10])
def test_gaussian_mean_squared_distance_is_one(d):
    # x ~ N(0, I/(2d)) gives E||x_i - x_j||^2 = 1 for every d
    X = make_points("gaussian", 3000, d=d, random_state=11)
    msd = np.mean(pdist(X, "sqeuclidean"))
    assert abs(msd - 1.0) < 0.05
    np.testing.assert_allclose(X.var(axis=0), 1.0 / (2 * d), rtol=0.12)


def test_uniform_in_unit_cube():
    X = make_points("uniform", 2000, d=3, random_state=0)
    assert X.min() >= -0.5 and X.max() < 0.5
    np.testing.assert_allclose(X.mean(axis=0), 0.0, atol=0.03)
    np.testing.assert_allclose(X.var(axis=0), 1.0 / 12, rtol=0.1)


def test_circle_radius_and_noise():
    X = make_points("circle", 2000, d=2, random_state=0, noise=0.0)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-12)
    X = make_points("circle", 2000, d=4, random_state=0, noise=0.05)
    r = np.linalg.norm(X[:, :2], axis=1)
    assert abs(r.mean() - 1.0) < 0.01 and 0.03 < r.std() < 0.07
    assert np.abs(X[:, 2:]).max() < 0.5


def test_grid_is_a_regular_grid_without_repeats():
    X = make_points("grid", 25, d=2, random_state=0)
    assert sorted(np.unique(X[:, 0])) == pytest.approx(np.linspace(-0.5, 0.5, 5))
    assert np.unique(X, axis=0).shape[0] == 25
    X = make_points("grid", 20, d=3, random_state=2)  # side 3, 20 of 27 points
    assert np.unique(X, axis=0).shape[0] == 20
    assert set(np.round(X.ravel(), 12)) <= {-0.5, 0.0, 0.5}


def test_a_grid_in_many_dimensions_is_drawn_without_building_it():
    """100 grid points at d = 21 built all 2**21 nodes (708 MiB); at d = 40 NumPy refused ('only supports up to 32
    dimensions'). The nodes are now drawn by their coordinates: distinct, on the grid, spread over both values."""
    import loe_viz.points as points

    for d in (21, 40, 64):
        X = make_points("grid", 100, d=d, random_state=3)
        assert X.shape == (100, d) and np.unique(X, axis=0).shape[0] == 100
        assert set(X.ravel().tolist()) == {-0.5, 0.5}  # side 2
        assert 0.3 < (X > 0).mean() < 0.7
    X = make_points("grid", 30, d=4, random_state=1)  # side 3: 81 nodes, built whole (as before)
    assert np.unique(X, axis=0).shape[0] == 30 and set(np.round(X.ravel(), 12)) <= {-0.5, 0.0, 0.5}
    assert np.array_equal(X, make_points("grid", 30, d=4, random_state=1))
    big = make_points("grid", 3000, d=12, random_state=0)  # side 2: 4,096 nodes, fewer than twice n: built whole
    assert np.unique(big, axis=0).shape[0] == 3000
    assert points._GRID_BYTES >= 4096 * 12 * 8


def test_swiss_roll_and_moons_use_extra_axes_for_jitter_only():
    X = make_points("swiss_roll", 500, d=5, random_state=0, noise=0.01)
    assert np.abs(X[:, 3:]).max() < 0.1 < np.ptp(X[:, :3], axis=0).min()
    X = make_points("moons", 500, d=3, random_state=0, noise=0.01)
    assert np.abs(X[:, 2]).max() < 0.1


@pytest.mark.parametrize(
    "args, kw, match",
    [
        (("swiss_roll", 10), {"d": 2}, r"^d must be >= 3 for kind='swiss_roll', got 2$"),
        (("moons", 10), {"d": 1}, r"^d must be >= 2 for kind='moons', got 1$"),
        (("spiral", 10), {"d": 1}, r"^d must be >= 2 for kind='spiral', got 1$"),
        (("circle", 10), {"d": 1}, r"^d must be >= 2 for kind='circle', got 1$"),
        ((np.str_("moons"), 10), {"d": 1}, r"^d must be >= 2 for kind='moons', got 1$"),  # not np.str_('moons')
        (("gaussian", 10), {"d": 0}, r"^d must be >= 1, got 0$"),
        (("gaussian", 1), {}, r"^n must be >= 2, got 1$"),
        (("gaussian", 2.5), {}, r"^n must be an integer, got 2\.5$"),
        (("cube", 10), {}, r"^kind must be one of gaussian, uniform, circle, blobs, moons, spiral, grid, swiss_roll; got 'cube'$"),
        ((None, 10), {}, r"^kind must be one of .*; got None$"),
        (("gaussian", 10), {"random_state": -3}, r"^random_state must be a non-negative integer"),
        # NaN and infinite noise made NaN and infinite points without a word
        (("moons", 10), {"noise": np.nan}, r"^noise must be finite, got nan$"),
        (("circle", 10), {"noise": np.inf}, r"^noise must be finite, got inf$"),
        (("spiral", 10), {"noise": -0.1}, r"^noise must be >= 0.0, got -0.1$"),
        (("moons", 10), {"noise": None}, r"^noise must be a real number, got None$"),
    ],
)
def test_make_points_errors(args, kw, match):
    with pytest.raises(ValueError, match=match):
        make_points(*args, **kw)


# --------------------------------------------------------------------------- load_points
EXPECTED = np.array([[1.0, 2.0], [3.5, -4.0], [5.0, 6e-3]])


@pytest.mark.parametrize(
    "text",
    [
        "1,2\n3.5,-4\n5,6e-3\n",  # no header
        "x,y\n1,2\n3.5,-4\n5,6e-3\n",  # header
        "x, y\n 1 , 2\n3.5,-4\n5,6e-3",  # spaces, no final newline
        "x\ty\n1\t2\n3.5\t-4\n5\t6e-3\n",  # TSV
        "x;y\n1;2\n3.5;-4\n5;6e-3\n",  # semicolons
        "1 2\n3.5   -4\n5 6e-3\n",  # whitespace
        "\ufeffx,y\n1,2\n3.5,-4\n5,6e-3\n",  # BOM
        "x,y\r\n1,2\r\n3.5,-4\r\n5,6e-3\r\n",  # Windows line endings
        "x,y\r1,2\r3.5,-4\r5,6e-3\r",  # old Mac line endings
        "# points\n\nx,y\n1,2\n\n3.5,-4\n# comment\n5,6e-3\n\n",  # comments and blank lines
    ],
)
def test_load_points_text_variants(text):
    np.testing.assert_array_equal(load_points(text), EXPECTED)
    np.testing.assert_array_equal(load_points(text.encode("utf-8")), EXPECTED)
    np.testing.assert_array_equal(load_points(io.StringIO(text)), EXPECTED)
    np.testing.assert_array_equal(load_points(io.BytesIO(text.encode("utf-8"))), EXPECTED)


def test_load_points_bom_with_windows_endings_from_file(tmp_path):
    p = tmp_path / "pts.csv"
    p.write_bytes("\ufeffa,b,c\r\n1,2,3\r\n4,5,6\r\n7,8,9\r\n".encode("utf-8"))
    X = load_points(p)
    np.testing.assert_array_equal(X, np.arange(1, 10, dtype=float).reshape(3, 3))
    np.testing.assert_array_equal(load_points(str(p)), X)
    assert X.dtype == np.float64 and X.flags.c_contiguous


def test_load_points_npy_roundtrip(tmp_path):
    X = make_points("gaussian", 20, d=3, random_state=5)
    p = tmp_path / "x.npy"
    np.save(p, X)
    np.testing.assert_array_equal(load_points(p), X)


def test_load_points_roundtrip_savetxt():
    X = make_points("blobs", 40, d=4, random_state=6)
    buf = io.StringIO()
    np.savetxt(buf, X, delimiter=",", header="a,b,c,d", comments="")
    np.testing.assert_allclose(load_points(buf.getvalue()), X, rtol=1e-15)


@pytest.mark.parametrize(
    "text, match",
    [
        ("", r"^points: the file is empty$"),
        ("\n  \n# only a comment\n", r"^points: the file is empty$"),
        ("x,y\n", r"^points: the file has a header but no rows$"),
        ("x,y\n1,2\n3,4\n5\n", r"^points: line 4 has 1 columns, expected 2$"),
        ("1,2\n3,4,5\n6,7\n", r"^points: line 2 has 3 columns, expected 2$"),
        ("x,y\n1,2\n3,four\n5,6\n", r"^points: line 3, column 2 holds 'four', not a number$"),
        ("x\ty\n1\t2\n3\tfour\n", r"^points: line 3, column 2 holds 'four', not a number$"),  # no '3\\tfour'
        ("1,2\n3,\n5,6\n", r"^points: line 2, column 2 is empty, not a number$"),
        ("1,2\n3,4\n5,\x1b[31m\n", r"^points: line 3, column 2 holds '\?\[31m', not a number$"),
        ("1,2\n3,4\nnan,6\n", r"^points contains NaN values \(first at row 2\)$"),
        ("1,2\n3,inf\n5,6\n", r"^points contains infinite values \(first at row 1\)$"),
        ("1,2\n3,4\n", r"^points must have at least 3 points, got 2$"),
    ],
)
def test_load_points_bad_text(text, match):
    with pytest.raises(ValueError, match=match):
        load_points(text)


def test_load_points_reports_file_line_numbers_despite_comments_and_blanks():
    text = "# exported\n\nx,y\n1,2\n\n3,4\n5\n"
    with pytest.raises(ValueError, match=r"^points: line 7 has 1 columns, expected 2$"):
        load_points(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1_0,2\n3,4\n5,6\n", [[10, 2], [3, 4], [5, 6]]),  # what float takes and NumPy's reader does not
        ("1,\u0662\n3,4\n5,\uff16\n", [[1, 2], [3, 4], [5, 6]]),  # non-ASCII digits
        ("1,2\n   \n3,4\n\t\n5,6\n", [[1, 2], [3, 4], [5, 6]]),  # lines of blanks among the rows
        ("x,y\n1,2\n  # note\n3,4\n# note\n5,6\n# end", [[1, 2], [3, 4], [5, 6]]),  # comments among the rows
        ("1\xa02\n3 4\n5\u30006\n", [[1, 2], [3, 4], [5, 6]]),  # Unicode blanks between the numbers
        ("x,#y\n1,2\n3,4\n5,6\n", [[1, 2], [3, 4], [5, 6]]),  # a '#' in the header
    ],
)
def test_load_points_takes_what_float_takes_read_in_bulk_or_line_by_line(text, expected):
    np.testing.assert_array_equal(load_points(text.encode()), np.array(expected, dtype=float))


@pytest.mark.parametrize(
    "tail, match",
    [
        ("5,x\n", r"^points: line 100002, column 2 holds 'x', not a number$"),
        ("5\n", r"^points: line 100002 has 1 columns, expected 2$"),
        ("5,6 # note\n", r"^points: line 100002, column 2 holds '6 # note', not a number$"),  # no comment mid-line
        ("5,6,\n", r"^points: line 100002 has 3 columns, expected 2$"),
        ("5,nan\n", r"^points contains NaN values \(first at row 100000\)$"),
        ('"5",6\n', r"^points: line 100002, column 1 holds '\"5\"', not a number$"),  # no quotes
    ],
)
def test_load_points_names_the_line_at_fault_after_many_good_ones(tail, match):
    text = "x,y\n" + "1,2\n" * 100_000 + tail + "3,4\n"
    with pytest.raises(ValueError, match=match):
        load_points(text.encode())


@pytest.mark.parametrize("tail", [b"", b"# the last line, read line by line\n"])
def test_load_points_memory_is_a_few_times_the_file_size(tail):
    """A 9.6 MB table of 2,400,000 rows took about 1.4 GB (Python lists of its lines and numbers) and 10 s."""
    import tracemalloc

    raw = b"".join(b"%d,%d\n" % (i % 10, i % 7) for i in range(100_000)) + tail  # 400 kB, 1.6 MB of numbers
    tracemalloc.start()
    try:
        X = load_points(raw, name="pts.csv")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert X.shape == (100_000, 2) and X[7].tolist() == [7.0, 0.0] and X.flags.c_contiguous
    assert peak < 10 * len(raw), f"{peak / len(raw):.1f} times the file's size"


def test_load_points_errors_name_the_file(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("x,y\n1,2\n3,oops\n")
    with pytest.raises(ValueError, match=r"^bad\.csv: line 3, column 2 holds 'oops', not a number$"):
        load_points(p)
    with pytest.raises(ValueError, match=r"^upload: the file is empty$"):
        load_points(b"", name="upload")


def test_load_points_not_utf8_and_wrong_type(tmp_path):
    with pytest.raises(ValueError, match=r"^points: not a text file \(it is not UTF-8\)$"):
        load_points(b"\xff\xfe\x00\x81")
    with pytest.raises(ValueError, match=r"^points source must be a path, text, bytes or a file object, got int$"):
        load_points(3)
    p = tmp_path / "obj.npy"
    np.save(p, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match=r"^obj\.npy: not a numeric \.npy array"):
        load_points(p)


def test_load_points_npy_whose_header_declares_more_than_the_file_holds(tmp_path):
    """A 192-byte .npy declaring 745 GiB made NumPy ask for that memory: a MemoryError, not the file's problem."""
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**5)})
    huge = tmp_path / "huge.npy"
    huge.write_bytes(buf.getvalue() + b"\0" * 64)
    with pytest.raises(ValueError, match=r"^huge\.npy: not a valid \.npy file: its header declares shape "
                                         r"\(1000000, 100000\) of float64, 800,000,000,000 bytes, but only 64 "
                                         r"follow$"):
        load_points(huge)
    cut = tmp_path / "cut.npy"  # a real array that lost its last row
    np.save(cut, np.arange(12.0).reshape(4, 3))
    cut.write_bytes(cut.read_bytes()[:-24])
    with pytest.raises(ValueError, match=r"^cut\.npy: .*shape \(4, 3\) of float64, 96 bytes, but only 72 follow$"):
        load_points(cut)
    text = tmp_path / "text.npy"
    text.write_text("1,2\n3,4\n5,6\n")
    with pytest.raises(ValueError, match=r"^text\.npy: the array is not a valid NumPy array"):
        load_points(text)
    np.save(tmp_path / "ok.npy", np.arange(12.0).reshape(4, 3))
    assert load_points(tmp_path / "ok.npy").shape == (4, 3)


# --------------------------------------------------------------------------- scale of distances
def test_distance_exponent_brings_extreme_points_to_a_safe_scale_and_leaves_others_alone():
    from loe_viz.points import DISTANCE_EXPONENT_BAND, distance_exponent

    X = make_points("gaussian", 20, d=3, random_state=0)
    assert distance_exponent(X) == 0 and distance_exponent(np.zeros((3, 2))) == 0
    assert distance_exponent(np.array([[np.ldexp(0.75, DISTANCE_EXPONENT_BAND)]])) == 0  # the band's edges
    assert distance_exponent(np.array([[np.ldexp(0.75, -DISTANCE_EXPONENT_BAND)]])) == 0
    assert distance_exponent(np.array([[np.ldexp(0.75, DISTANCE_EXPONENT_BAND + 1)]])) == DISTANCE_EXPONENT_BAND + 1
    for k in (300, -300, 1000, -1000):
        e = distance_exponent(np.ldexp(X, k))
        Y = np.ldexp(np.ldexp(X, k), -e)
        assert 0.5 <= np.abs(Y).max() < 1
        np.testing.assert_array_equal(Y, np.ldexp(X, -distance_exponent(np.ldexp(X, 300)) + 300))  # no digit lost
        D = ((Y[:, None] - Y[None]) ** 2).sum(-1)
        assert np.isfinite(D).all() and (D[~np.eye(20, dtype=bool)] > 0).all()
    # in the band, squared distances are finite and positive in any dimension
    top = np.ldexp(np.ones((2, 10**4)), DISTANCE_EXPONENT_BAND - 1)
    top[1] *= -1
    assert np.isfinite(((top[0] - top[1]) ** 2).sum())
