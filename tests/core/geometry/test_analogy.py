"""Analogies a − b + c (explorer.core.geometry.analogy) against brute force: the same
answers in memory and streamed from a table too big to hold."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.geometry.analogy import AnalogyForm, analogy_job
from explorer.core.sources import open_table
from tests.support.jobs import drain as run


def brute_force(rows: np.ndarray, a: int, b: int, c: int, k: int, unit: bool = True) -> tuple[list[int], np.ndarray]:
    e = rows.astype(np.float64)
    en = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
    target = en[a] - en[b] + en[c] if unit else e[a] - e[b] + e[c]
    cos = en @ target / np.linalg.norm(target)
    cos[[a, b, c]] = -np.inf
    top = np.argsort(-cos)[:k]
    return [int(i) for i in top], cos[top]


def test_king_minus_man_plus_woman_on_minilm():
    t = open_table("minilm")
    ids = [t.tokenizer.id_of(w) for w in ("king", "man", "woman")]
    steps, res = run(analogy_job(t, *ids))
    want, cos = brute_force(t.matrix()[: t.trained_rows], *ids, k=5)
    assert res.ids() == want and (res.a, res.b, res.c) == tuple(ids)
    assert t.piece(res.best.id) == "queen"
    np.testing.assert_allclose([n.cosine for n in res.answers], cos, atol=1e-5)
    assert res.rows_searched == t.trained_rows and steps


def test_the_plain_sum_is_a_minus_b_plus_c_of_the_rows_as_stored():
    t = open_table("minilm")
    ids = [t.tokenizer.id_of(w) for w in ("king", "man", "woman")]
    _, unit = run(analogy_job(t, *ids))
    _, plain = run(analogy_job(t, *ids, form=AnalogyForm.PLAIN))
    want, cos = brute_force(t.matrix()[: t.trained_rows], *ids, k=5, unit=False)
    assert plain.ids() == want and plain.form is AnalogyForm.PLAIN and unit.form is AnalogyForm.UNIT
    np.testing.assert_allclose([n.cosine for n in plain.answers], cos, atol=1e-5)
    # the two targets differ: queen's cosine is not the same number under both
    queen = t.tokenizer.id_of("queen")
    got = {r.form: next(n.cosine for n in r.answers if n.id == queen) for r in (unit, plain)}
    assert abs(got[AnalogyForm.UNIT] - got[AnalogyForm.PLAIN]) > 0.005
    assert plain.as_json("minilm", ["king", "man", "woman"], t.piece)["formula"] == "a − b + c"
    assert unit.as_json("minilm", ["king", "man", "woman"], t.piece)["form"] == "unit"


def test_a_table_too_big_to_hold_is_streamed_with_progress():
    t = open_table("random:530000x128")  # 67.8 M values: past what a table may hold in memory
    assert not t.fits_in_memory and t.unit_matrix() is None
    a, b, c = 5, 500_000, 77_777
    steps, res = run(analogy_job(t, a, b, c, k=4))
    assert len(steps) > 2 and steps[-1][0] == pytest.approx(1.0)
    assert all(0 <= f <= 1 for f, _ in steps)
    # independent check, in float64, one block at a time
    abc = t.rows([a, b, c]).astype(np.float64)
    abc /= np.linalg.norm(abc, axis=1, keepdims=True)
    target = abc[0] - abc[1] + abc[2]
    target /= np.linalg.norm(target)
    best = np.full(len(res.answers), -np.inf)
    for start, blk in t.iter_blocks(65536):
        e = blk.astype(np.float64)
        cos = e @ target / np.linalg.norm(e, axis=1)
        for i in (a, b, c):
            if start <= i < start + len(blk):
                cos[i - start] = -np.inf
        best = np.sort(np.concatenate([best, np.sort(cos)[-len(best):]]))[-len(best):]
    np.testing.assert_allclose([n.cosine for n in res.answers], best[::-1], atol=1e-5)
    assert not {a, b, c} & set(res.ids()) and res.rows_searched == 530_000


def test_an_id_outside_the_table_is_refused():
    t = open_table("toy:robot")
    with pytest.raises(IndexError):
        run(analogy_job(t, 0, 1, 4))
