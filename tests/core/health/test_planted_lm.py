"""Truth on a model with a known answer: a tiny causal LM trained here, in
which 20 ordinary tokens never occur in the training text. Health must find
them from the output side; the input side alone cannot (an untied input row
that never moved has a typical norm)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.core.health import health_report
from explorer.core.health.text import verdict
from explorer.core.sources import open_table
from tests.support.planted_lm import UNSEEN, build_planted_lm

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module", params=[False, True], ids=["untied", "tied"])
def planted(request, tmp_path_factory):
    lm = build_planted_lm(tmp_path_factory.mktemp("planted-lm"), tied=request.param)
    table = open_table(str(lm.folder))
    return lm, table, health_report(table)


def test_the_model_learned_its_text(planted):
    lm, _, _ = planted
    assert lm.final_loss < np.log(316) / 2  # far below guessing among the seen tokens


def test_never_seen_tokens_lead_the_ranking(planted):
    lm, table, r = planted
    assert table.tied is lm.tied
    assert r.side == ("shared" if lm.tied else "output")
    assert r.reference.kind == "unused_tokens" and list(r.reference.ids) == lm.reserved
    top = {int(i) for i in r.ranked[:UNSEEN]}
    assert len(top & set(lm.unseen)) >= UNSEEN - 2
    # every candidate of the 2 % cut is a never-seen token
    assert set(r.candidates.tolist()) <= set(lm.unseen)


@pytest.mark.parametrize("planted", [False], ids=["untied"], indirect=True)
def test_the_untied_input_side_alone_cannot_tell(planted):
    lm, table, r = planted
    norms = np.linalg.norm(table.matrix(), axis=1)
    words = np.arange(len(lm.reserved), table.vocab_size)
    lowest = set(words[np.argsort(norms[words])[:UNSEEN]].tolist())
    assert len(lowest & set(lm.unseen)) <= UNSEEN // 4
    np.testing.assert_allclose(r.norms, norms, rtol=1e-5)  # the second indicator is the input side's
    out = table.output_table()
    assert out is not table and r.output_norms is not None
    np.testing.assert_allclose(r.output_norms, np.linalg.norm(out.matrix(), axis=1), rtol=1e-5)


def test_a_tied_model_that_marks_no_row_is_not_ranked_by_norm(tmp_path):
    """No unused tokens, no byte tokens, no duplicates, every token reachable: there is no reference,
    and in a tied model the rows of lowest norm are frequent tokens, so nothing is ranked by norm."""
    from explorer.core.health import Flag
    from tests.support import model_factory as mf

    built = mf.build_model(tmp_path / "tied", "llama", tied=True, tokenizer=mf.train_wordlevel(), seed=4)
    table = open_table(str(built.folder))
    r = health_report(table)
    assert table.tied is True and r.side == "shared" and r.reference.kind == "none"
    assert not (r.flags & Flag.LOW_NORM).any()
    assert np.isnan(r.scores[r.ranked]).all()
    assert list(r.ranked) == sorted(r.ranked)  # id order, not the norm's
    assert "score above" in verdict(r) and "norm below" not in verdict(r)
