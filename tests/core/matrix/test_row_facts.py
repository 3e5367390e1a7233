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


def test_a_row_as_csv_reads_back_to_the_same_values_of_its_float_type():
    """Copy as CSV: the csv module reads the header and the line back, the piece unquoted, and each
    value parses to the very number of the row's float type (float32 and float64), NaN and inf too."""
    import csv
    import io

    from explorer.core.matrix.rows import row_csv

    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        row = (rng.standard_normal(300) * 10.0 ** rng.integers(-30, 30, 300)).astype(dtype)
        row[[3, 7, 11]] = [np.nan, np.inf, -np.inf]
        text = row_csv(42, 'say "hi", then go', row)
        header, line = list(csv.reader(io.StringIO(text)))
        assert header == ["id", "piece"] + [f"e{j}" for j in range(300)]
        assert line[:2] == ["42", 'say "hi", then go']
        back = np.array(line[2:], dtype=np.float64).astype(dtype)
        np.testing.assert_array_equal(back, row)  # bit for bit, NaN where NaN
    assert row_csv(0, "x", np.zeros(0, np.float32)) == 'id,piece,\n0,"x",\n'
