"""The overview as colour-map indices, computed off the GUI thread."""

from __future__ import annotations

import numpy as np

from explorer.core.matrix.overview import CODE_STEPS, NAN_CODE, color_codes, matrix_overview
from explorer.core.sources import open_table


def test_codes_map_minus_limit_to_zero_zero_to_the_middle_and_limit_to_the_top():
    values = np.array([[-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, np.inf, -np.inf, np.nan]], np.float32)
    codes = color_codes(values, 1.0)
    assert codes.dtype == np.uint8
    assert codes.tolist() == [[0, 0, 64, 127, 190, 254, 254, 254, 0, NAN_CODE]]
    assert CODE_STEPS - 1 == 254 and NAN_CODE == CODE_STEPS


def test_overview_codes_follow_its_image():
    ov = matrix_overview(open_table("random:5000x300:3"))
    expect = np.rint((np.clip(ov.image, -ov.limit, ov.limit) + ov.limit) / (2 * ov.limit) * 254)
    # within one step: the scale is applied in another order than here
    assert np.abs(ov.codes.astype(int) - expect.astype(int)).max() <= 1
