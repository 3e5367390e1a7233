"""row_facts: a row's values, norm (over its finite values, summed in float64), extremes and
byte offset, checked against numpy on real tables."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.matrix.rows import row_facts
from explorer.core.sources import open_table


@pytest.mark.parametrize("spec", ["minilm", "smollm2", "random:300x16"])
def test_row_facts_agree_with_numpy(spec):
    table = open_table(spec)
    for i in (0, table.vocab_size // 2, table.vocab_size - 1):
        facts = row_facts(table, i)
        row = table.row(i).astype(np.float64)
        np.testing.assert_array_equal(facts.values, table.row(i))
        assert facts.norm == pytest.approx(float(np.linalg.norm(row)), rel=1e-12)
        assert (facts.vmin, facts.vmax) == (row.min(), row.max())
        assert facts.offset == i * table.row_bytes and facts.nonfinite == 0


def test_the_norm_of_huge_values_does_not_overflow_and_skips_non_finite(tmp_path):
    from safetensors.numpy import save_file

    e = np.ones((3, 4), np.float32)
    e[1] = [3e38, 3e38, np.nan, -np.inf]
    save_file({"weight": e}, str(tmp_path / "t.safetensors"))
    facts = row_facts(open_table(str(tmp_path / "t.safetensors")), 1)
    assert facts.norm == pytest.approx(np.sqrt(2) * 3e38, rel=1e-6) and facts.nonfinite == 2
