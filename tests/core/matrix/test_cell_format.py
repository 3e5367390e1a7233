"""Number formats of matrix cells (explorer.core.matrix.cell_format): one precision
per matrix, chosen from its values; counts short enough for small cells."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.matrix.cell_format import MAX_DECIMALS, CellFormat, cell_format, compact_count


def _decimals(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def test_one_precision_per_matrix():
    # the mix: "3", "+10" and "+0.068" in one dot-product matrix
    dots = np.array([[10.0, 3.0, 0.068], [3.0, 4.2, -0.5], [0.068, -0.5, 1.0]])
    fmt = cell_format(dots, "dot", 3)
    texts = [fmt(v) for v in dots.ravel()]
    assert len({_decimals(t) for t in texts}) == 1
    assert fmt(10.0) == "+10.0" and fmt(3.0) == "+3.0" and fmt(0.068) == "+0.1"
    # cosines: 3 decimals, 2 past 8 tokens (FACTS: 0.995, -0.316)
    assert cell_format(np.eye(4), "cosine", 4) == CellFormat(3, True)
    assert cell_format(np.eye(4), "cosine", 4)(-0.3162) == "-0.316"
    assert cell_format(np.eye(12), "cosine", 12).decimals == 2
    # about 3 significant digits of the largest value, fewer past 8 tokens
    assert cell_format(np.array([[1.7, -0.5], [-0.5, 1.0]]), "dot", 2).decimals == 2
    assert cell_format(np.array([[250.0]]), "euclidean", 12).decimals == 0
    assert cell_format(np.array([[0.0021]]), "euclidean", 4).decimals == 5
    assert not cell_format(np.array([[0.5]]), "euclidean", 4).signed


def test_values_that_differ_only_late_get_the_digits_that_tell_them_apart():
    # distances all between 12.31 and 12.48: 2 significant digits would write "12" everywhere
    rng = np.random.default_rng(0)
    d = rng.uniform(12.31, 12.48, (12, 12))
    d = (d + d.T) / 2
    np.fill_diagonal(d, 0.0)
    fmt = cell_format(d, "euclidean", 12)
    assert fmt.decimals == 1
    assert len({fmt(v) for v in d[~np.eye(12, dtype=bool)]}) >= 2
    # distances between random rows (0.74-0.82) already differ in their second decimal
    x = rng.normal(0, 0.02, (12, 768))
    fmt = cell_format(np.linalg.norm(x[:, None] - x[None], axis=-1), "euclidean", 12)
    assert fmt.decimals == 2


def test_zero_has_no_sign():
    fmt = CellFormat(1, signed=True)
    assert fmt(-0.04) == "0.0" and fmt(0.04) == "0.0" and fmt(0.0) == "0.0"
    assert fmt(0.06) == "+0.1" and fmt(-0.06) == "-0.1"
    assert CellFormat(2)(float("nan")) == "nan"


def test_all_zero_and_empty_matrices():
    assert cell_format(np.zeros((2, 2)), "dot", 2).decimals == 2
    assert cell_format(np.zeros((0, 0)), "euclidean", 0).decimals == 2


def test_compact_counts_fit_five_characters():
    cases = {0: "0", 7: "7", 42: "42", 999: "999", 1000: "1.00k", 1234: "1.23k", 11527: "11.5k",
             13586: "13.6k", 128255: "128k", 999_499: "999k", 1_050_000: "1.05M"}
    assert {k: compact_count(k) for k in cases} == cases


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.floats(0, 1e12, allow_nan=False))
def test_compact_count_is_short_and_close(x):
    text = compact_count(x)
    assert len(text) <= 5
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}.get(text[-1], 1.0)
    value = float(text.rstrip("kMG")) * scale
    assert abs(value - x) <= max(0.5, 0.006 * x)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(1, 14), st.sampled_from(["cosine", "dot", "euclidean"]), st.integers(-6, 6), st.integers(0, 999))
def test_every_cell_of_a_matrix_has_the_same_decimals(n, metric, exponent, seed):
    rng = np.random.default_rng(seed)
    values = rng.normal(0, 10.0 ** exponent, (n, n))
    fmt = cell_format(values, metric, n)
    assert 0 <= fmt.decimals <= MAX_DECIMALS
    assert {_decimals(fmt(v)) for v in values.ravel()} == {fmt.decimals}
