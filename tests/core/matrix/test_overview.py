"""What the matrix view draws: the sampled overview and the band around a row."""

import numpy as np

from explorer.core.matrix.overview import (
    MAX_OVERVIEW_COLS,
    MAX_OVERVIEW_ROWS,
    iter_matrix_overview,
    matrix_overview,
    row_band,
)
from explorer.core.sources import open_table


def test_overview_of_a_small_table_is_the_table():
    t = open_table("toy:robot")
    o = matrix_overview(t)
    np.testing.assert_array_equal(o.image, t.matrix())
    assert (o.row_step, o.col_step) == (1, 1)


def test_overview_samples_big_tables_evenly():
    t = open_table("random:10000x3000")
    o = matrix_overview(t)
    assert o.image.shape[0] <= MAX_OVERVIEW_ROWS and o.image.shape[1] <= MAX_OVERVIEW_COLS
    np.testing.assert_array_equal(o.row_ids, np.arange(0, 10000, o.row_step))
    np.testing.assert_array_equal(o.image, t.rows(o.row_ids)[:, :: o.col_step])
    lim = o.limit
    assert 0 < lim <= np.abs(o.image).max()


def test_overview_generator_can_stop_between_chunks():
    t = open_table("random:200000x64")
    gen = iter_matrix_overview(t, chunk=64)
    first = next(gen)
    assert 0 < first < 1
    gen.close()  # a cancelled worker stops here without reading the rest


def test_band_is_clipped_to_the_table():
    t = open_table("toy:five-rows")
    b = row_band(t, 4, half=3)
    assert (b.start, b.stop) == (0, 5)
    np.testing.assert_array_equal(b.image, t.matrix())
    t2 = open_table("random:1000x4")
    b2 = row_band(t2, 999, half=10)
    assert b2.stop == 1000 and b2.start == 1000 - 21
    np.testing.assert_array_equal(b2.image, t2.rows(np.arange(979, 1000)))
