"""Token health (explorer.core.health) on real tables, checked against numpy."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from explorer.core.health import CATEGORIES, Flag, health_report, token_categories
from explorer.core.health.job import iter_health
from explorer.core.health.reference import pca_sample_ids
from explorer.core.health.text import verdict
from explorer.core.sources import open_table
from tests.support.jobs import drain

_UNUSED = re.compile(r"\[unused\d+\]")


@pytest.fixture(scope="module")
def minilm():
    table = open_table("minilm")
    return table, health_report(table)


@pytest.fixture(scope="module")
def bundled():
    table = open_table("default")
    return table, health_report(table)


def _numpy_scores(m: np.ndarray, pc1: np.ndarray, ref: list[int]) -> np.ndarray:
    """The Magikarp-style score written out plainly: rows without their pc1
    part, cosine with the mean reference row (the others' mean for a reference row)."""
    x = m - np.outer(m @ pc1, pc1)
    mean = x[ref].mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = (x @ mean) / (np.linalg.norm(x, axis=1) * np.linalg.norm(mean))
    total = x[ref].sum(axis=0)
    for i in ref:
        other = (total - x[i]) / (len(ref) - 1)
        scores[i] = x[i] @ other / (np.linalg.norm(x[i]) * np.linalg.norm(other))
    return scores


def test_minilm_unused_rows_lead_the_list(minilm):
    table, r = minilm
    assert r.reference.kind == "unused_tokens" and r.reference.count == 994
    top = [table.piece(i) for i in r.order[:100]]
    assert sum(bool(_UNUSED.fullmatch(p)) for p in top) >= 60
    assert all(r.flags[i] & Flag.UNDER_TRAINED for i in r.order[:100])
    # BERT never sees [unusedN] from text: the tokenizer splits it into [ unused ##N ]
    counts = r.category_counts()
    assert counts["special"] == 5 and counts["unreachable"] >= 994 and sum(counts.values()) == table.vocab_size
    assert all(r.category_of(i) == "unreachable" for i in r.reference.ids)
    # the ranking holds only tokens a text can reach; [unusedN] are listed apart, as unreachable
    assert all(r.category_of(int(i)) == "ok" for i in r.ranked[:500])
    listed = {u.id: u for u in r.unreachable}
    assert set(r.reference.ids) <= set(listed) and not any(listed[i].single for i in r.reference.ids)
    assert len(r.candidates) == int(np.ceil(0.02 * len(r.ranked)))
    assert list(r.candidates) == list(r.ranked[: len(r.candidates)])
    assert all(r.flags[i] & Flag.UNDER_TRAINED for i in r.ranked[:100])


def test_minilm_numbers_match_numpy(minilm):
    table, r = minilm
    m = table.matrix().astype(np.float64)
    norms = np.linalg.norm(m, axis=1)
    np.testing.assert_allclose(r.norms, norms, rtol=1e-5)
    np.testing.assert_allclose(r.norm_z, (norms - norms.mean()) / norms.std(), atol=1e-4)
    sample = m[pca_sample_ids(*m.shape)]
    centred = sample - sample.mean(axis=0)
    pc1 = np.linalg.eigh(centred.T @ centred)[1][:, -1]
    assert abs(abs(pc1 @ r.pc1) - 1) < 1e-6
    np.testing.assert_allclose(r.scores, _numpy_scores(m, r.pc1, list(r.reference.ids)), atol=1e-5)
    # the bar: rows flagged on score are exactly those above it
    assert np.array_equal(np.nonzero(r.flags & Flag.HIGH_SCORE)[0], np.nonzero(r.scores > r.score_threshold)[0])


def test_bundled_model_flags_its_corpus_rare_words(bundled):
    from explorer.core.training.bundled import CORPUS_SEED, CORPUS_SENTENCES
    from explorer.core.training.corpus import synthetic_corpus

    table, r = bundled
    corpus = synthetic_corpus(CORPUS_SENTENCES, CORPUS_SEED)
    count_of = dict(zip(corpus.words, corpus.counts()))
    counts = np.array([count_of[table.piece(i)] for i in range(table.vocab_size)])
    assert np.array_equal(r.corpus_counts, counts)
    flagged = set(r.flagged.tolist())
    assert flagged == set(np.nonzero(counts == 0)[0].tolist())  # <pad>, <unk> and "of": never in the corpus
    assert "of" in {table.piece(i) for i in flagged}
    assert counts[~np.isin(np.arange(table.vocab_size), list(flagged))].min() > 0
    assert r.reference.kind == "lowest_norm"


@pytest.mark.parametrize("spec", ["random:3000x48", "random:3000x48:1", "random:800x256:2"])
def test_random_table_flags_nothing_beyond_chance(spec):
    r = health_report(open_table(spec))
    assert r.flagged_count == 0 and not (r.flags & (Flag.EXACT_DUPLICATE | Flag.NEAR_DUPLICATE)).any()
    assert r.expected_by_chance <= 0.05
    assert "beyond chance" in verdict(r)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """A bfloat16 folder (read through the memory map: too big to preload)
    with known defects, and a tokenizer two ids shorter than the table."""
    import torch
    from safetensors.torch import save_file
    from tokenizers import Tokenizer, models, pre_tokenizers

    v, d = 4200, 2048
    gen = torch.Generator().manual_seed(0)
    e = (torch.randn(v, d, generator=gen) * 0.02).to(torch.bfloat16)
    e[5] = 0
    e[9, 3] = float("nan")
    e[30] = e[20]
    e[50] = e[40] * 1.001 + e[41] * 0.0005
    e[100:120] *= 0.05
    folder = tmp_path_factory.mktemp("planted")
    save_file({"model.embed_tokens.weight": e}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "vocab_size": v, "hidden_size": d}))
    vocab = {f"w{i}": i for i in range(v - 2)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="w0"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    table = open_table(str(folder))
    return table, e.float().double().numpy(), health_report(table)


def test_bfloat16_file_is_streamed_in_its_own_dtype(planted):
    import torch

    table, _, _ = planted
    assert table.dtype == "bfloat16" and not table.holds_matrix
    blocks = list((start, b.dtype, b.shape[0]) for start, b in table.iter_native_blocks(block_bytes=4 << 20))
    assert len(blocks) > 1 and all(dt == torch.bfloat16 for _, dt, _ in blocks)
    assert sum(n for _, _, n in blocks) == table.vocab_size


def test_planted_defects_are_found(planted):
    table, e, r = planted
    finite = np.isfinite(e).all(axis=1)
    norms = np.where(finite, np.linalg.norm(np.where(finite[:, None], e, 0), axis=1), np.nan)
    np.testing.assert_allclose(r.norms, norms, rtol=1e-5)
    assert r.flags[5] & Flag.ZERO and r.flags[9] & Flag.NON_FINITE
    assert r.flags[20] & Flag.EXACT_DUPLICATE and r.duplicate_of[30] == 20 and r.duplicate_of[20] == 30
    assert r.flags[40] & Flag.NEAR_DUPLICATE and r.duplicate_of[50] == 40
    exact = set(np.nonzero(r.flags & Flag.EXACT_DUPLICATE)[0])
    near = set(np.nonzero(r.flags & Flag.NEAR_DUPLICATE)[0])
    assert exact == {20, 30} and near == {40, 50}
    # the zero row, the shrunk ones, and the exact pair: rows that equal each other are the model's own
    # sign of never being trained, so they are its reference (no unused tokens here) and score as each other
    assert r.reference.kind == "model" and set(r.reference.ids) == {20, 30}
    assert set(r.flagged.tolist()) == {5, 20, 30, *range(100, 120)}
    assert list(r.order[:2]) in ([5, 9], [9, 5])  # zero and non-finite rows lead
    v = table.vocab_size
    assert r.category_of(v - 1) == r.category_of(v - 2) == "no_piece" and r.category_of(v - 3) == "ok"
    valid = np.isfinite(norms) & (norms > 0)
    np.testing.assert_allclose(r.scores[valid], _numpy_scores(np.where(finite[:, None], e, 0), r.pc1,
                                                              list(r.reference.ids))[valid], atol=1e-4)


def test_smollm2_round_trip_categories():
    table = open_table("smollm2")
    cats = token_categories(table.tokenizer, table.vocab_size)
    tok = table.tokenizer.backend
    undecodable = np.nonzero(cats == CATEGORIES.index("undecodable"))[0]
    assert len(undecodable) > 100  # byte-level pieces holding part of a character
    assert all("\ufffd" in tok.decode([int(i)]) for i in undecodable[:50])
    assert (cats == CATEGORIES.index("special")).sum() == 17
    ok = np.nonzero(cats == CATEGORIES.index("ok"))[0]
    assert all(tok.encode(tok.decode([int(i)]), add_special_tokens=False).ids == [int(i)] for i in ok[::997])


def test_tokenizer_bigger_than_table_has_ids_without_rows():
    from explorer.core.tokens.tokenize import NameTokenizer

    cats = token_categories(NameTokenizer(["a", "b", "c", "d"], special=["d"]), rows=3)
    assert [CATEGORIES[c] for c in cats] == ["ok", "ok", "ok", "no_row"]
    cats = token_categories(NameTokenizer(["a", "b", "a"]), rows=4)
    assert [CATEGORIES[c] for c in cats] == ["unreachable", "ok", "ok", "no_piece"]  # "a" encodes to id 2


def test_verification_says_why_a_model_cannot_be_asked():
    from explorer.core.health.verify import VerifyUnavailable, model_source

    with pytest.raises(VerifyUnavailable, match="BertModel"):
        model_source(open_table("minilm"))
    with pytest.raises(VerifyUnavailable, match="ExplorerToyLM"):
        model_source(open_table("default"))
    with pytest.raises(VerifyUnavailable):
        model_source(open_table("random:100x8"))
    folder, kwargs = model_source(open_table("smollm2"))
    assert kwargs == {"gguf_file": "SmolLM2-135M-Instruct.Q4_1.gguf"}


def test_a_causal_model_is_asked_to_repeat_its_tokens(tmp_path, capfd):
    """Magikarp's verification, recomputed here plainly: the prompt text,
    every placeholder id swapped for the token, three greedy steps (the whole
    sequence run again at each, no cache), the token's highest probability
    over steps and prompts."""
    import torch
    from transformers import AutoModelForCausalLM

    from explorer.core.health.verify import PROMPTS, STEPS, THRESHOLD, iter_verify, placeholder_id, prompt_text
    from explorer.core.jobs import run_to_end
    from tests.support import model_factory as mf

    built = mf.build_model(tmp_path / "tiny", "llama", "float32", tied=False, tokenizer=mf.train_bpe(120), seed=1)
    table = open_table(str(built.folder))
    ids = [7, 40, 77, 100]
    steps = []
    capfd.readouterr()
    res = run_to_end(iter_verify(table, ids), steps.append)
    err = capfd.readouterr().err  # issue 25, item 17: no progress bars on the terminal
    assert "Loading weights" not in err and "it/s" not in err and "%|" not in err
    assert steps and [v.id for v in res.results] == ids and res.prompts == len(PROMPTS)
    model = AutoModelForCausalLM.from_pretrained(str(built.folder)).eval()
    tok = table.tokenizer.backend
    word_id = placeholder_id(tok)
    word = tok.decode([word_id])
    for v in res.results:
        best = 0.0
        for prompt in PROMPTS:
            seq = torch.tensor([[v.id if i == word_id else i for i in tok.encode(prompt_text(prompt, word)).ids]])
            for _ in range(STEPS):
                with torch.no_grad():
                    probs = torch.softmax(model(input_ids=seq).logits[0, -1].double(), -1)
                best = max(best, float(probs[v.id]))
                seq = torch.cat([seq, probs.argmax().view(1, 1)], dim=1)
        assert v.confirmed == (best < THRESHOLD)
        if v.confirmed:  # asked every prompt: the same maximum
            assert v.probability == pytest.approx(best, abs=1e-6)
        else:  # rejected at the first prompt that reached the threshold
            assert THRESHOLD <= v.probability <= best + 1e-9


def test_verification_statuses_follow_magikarp_thresholds():
    from explorer.core.health.verify import status_of

    assert [status_of(p) for p in (0.0005, 0.005, 0.02, 0.9)] == [
        "verified", "weakly verified", "rejected", "rejected"]


def test_a_table_without_a_tokenizer_has_no_round_trip_to_report():
    """Issue 25, item 5: "Tokenizer round trip: ok 128,256" for a random table."""
    from explorer.core.health import health_report
    from explorer.core.health.text import category_line, format_report

    table = open_table("random:500x8")
    report = health_report(table)
    assert not report.round_trip_checked and report.as_json(5, str)["round_trip_checked"] is False
    assert "no tokenizer" in category_line(report) and "500 ok" not in format_report(report, 5, table)
    checked = health_report(open_table("default"))
    assert checked.round_trip_checked and "ok" in category_line(checked)


def test_the_lesson_says_so_when_the_flagged_rows_norms_are_not_numbers(planted):
    """A training run that diverged leaves NaN rows; the lesson's typical norms must not warn
    ("All-NaN slice") or print nan."""
    import dataclasses
    import warnings

    from explorer.core.health.text import lesson

    table, _, r = planted
    counts = np.zeros(len(r.norms), np.int64)
    for norms, want in ((np.where(np.isin(np.arange(len(r.norms)), r.flagged), np.nan, r.norms), "not finite"),
                        (r.norms, "norm about")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            text = lesson(dataclasses.replace(r, norms=norms, corpus_counts=counts), table)
        assert want in text and "nan" not in text.lower().replace("finite numbers", "")
    nan_free = r.norms[np.isfinite(r.norms)]
    assert f"against {np.median(nan_free):.2f} for a typical row" in text


@pytest.mark.filterwarnings("ignore:The given NumPy array is not writable")  # pytest's filters come first
def test_rows_of_two_values_are_judged_by_their_norm_alone():
    """With two values per row, one direction is left once the first principal component is
    removed: every score is +1 or -1, and random 20,000 x 2 had 9,941 rows "under-trained".
    Now the score bar is off, the planted small rows are the ones flagged, and the verdict says
    why; three values keep the score."""
    from explorer.core.sources.memory import open_object

    rng = np.random.default_rng(4)
    angles = rng.uniform(0, 2 * np.pi, 3000)
    e = np.stack([np.cos(angles), np.sin(angles)], axis=1) * rng.uniform(0.9, 1.1, (3000, 1))
    planted = rng.choice(3000, 12, replace=False)
    e[planted] *= 1e-3
    r = health_report(open_object(e.astype(np.float32)))
    assert np.isnan(r.score_threshold) and np.isfinite(r.norm_threshold)
    assert not (r.flags & Flag.HIGH_SCORE).any()
    np.testing.assert_array_equal(np.nonzero(r.flags & Flag.LOW_NORM)[0], np.sort(planted))
    assert r.flagged_count == 12
    assert set(r.order[:12].tolist()) == set(planted.tolist())  # ranked by norm, smallest first
    assert "per row the score tells no rows apart" in verdict(r) and verdict(r).startswith("12 of 3,000 rows")
    assert health_report(open_table("random:20000x2")).flagged_count == 0
    three = health_report(open_table("random:3000x3"))
    assert np.isfinite(three.score_threshold) and "tells no rows apart" not in verdict(three)


def test_a_norm_bar_below_zero_is_not_quoted_as_a_bar():
    """Random rows of 8 values: the norms spread so widely that the bar lands below zero. The
    verdict said "none has a norm below -0.007"; it now says why the norm flags nothing."""
    r = health_report(open_table("random:5000x8"))
    assert r.norm_threshold < 0 and np.isfinite(r.score_threshold)
    text = verdict(r)
    assert "norm below" not in text and "the norms spread too widely" in text
    assert "score above" in text and text.startswith("No row is flagged")
    wide = health_report(open_table("random:5000x64"))
    assert wide.norm_threshold > 0 and "norm below" in verdict(wide) and "spread" not in verdict(wide)


class _CountingTokenizer:
    """A real tokenizers.Tokenizer that notes how many texts each batch call is given."""

    def __init__(self, tok):
        self._tok = tok
        self.batches: list[int] = []

    def __getattr__(self, name):
        return getattr(self._tok, name)

    def decode_batch(self, seqs, **kw):
        self.batches.append(len(seqs))
        return self._tok.decode_batch(seqs, **kw)

    def encode_batch_fast(self, texts, **kw):
        self.batches.append(len(texts))
        return self._tok.encode_batch_fast(texts, **kw)


def test_the_round_trip_asks_the_tokenizer_a_thousand_ids_a_step():
    """A batch call holds the GIL for most of its time (the window waits for all of it): 8,192
    of SmolLM2's ids held it for 30-70 ms."""
    from explorer.core.health import roundtrip

    table = open_table("smollm2")
    tok = _CountingTokenizer(table.tokenizer.backend)
    out = np.zeros(table.vocab_size, np.int8)
    steps = sum(1 for _ in roundtrip._hf_categories(tok, table.vocab_size, out, table.vocab_size))
    assert steps >= table.vocab_size // 1024  # and as many steps: the window gets the GIL between them
    assert max(tok.batches) <= 1024 and sum(tok.batches) >= 2 * (table.vocab_size - 17)  # decode + encode each id
    np.testing.assert_array_equal(out, token_categories(table.tokenizer, table.vocab_size))


def test_contained_in_names_the_longer_tokens_of_higher_id_built_on_a_piece():
    from explorer.core.health.tables import contained_in

    pieces = ["ab", "a", "xab", "b", "abc", "ba", "ab"]
    got = contained_in(pieces, [0, 1, 3, 6])
    assert got[0] == (2, 4)  # "xab", "abc"; not "a" (lower id), nor the other "ab" (not longer)
    assert got[1] == (2, 4, 5, 6)  # every longer piece of higher id with an "a"
    assert got[3] == (4, 5, 6)
    assert got[6] == ()
    assert contained_in(pieces, [1], limit=2)[1] == (2, 4)


def test_the_search_of_the_joined_pieces_goes_a_span_at_a_time_and_finds_what_str_find_finds():
    """One ``str.find`` over the 79 MB of a 10,000,000-row table's pieces held the GIL 100-130 ms, hundreds
    of times a health check; a span at a time, each call is short and the window's thread gets its turn
    between them."""
    import random

    from explorer.core.health.tables import _find

    windows = []

    class Joined(str):
        def find(self, sub, start, end):
            windows.append(end - start)
            return str.find(self, sub, start, end)

    rng = random.Random(3)
    text = "".join(rng.choice("abc\x00") for _ in range(5000))
    joined = Joined(text)
    for _ in range(300):
        needle = "".join(rng.choice("abc") for _ in range(rng.randint(1, 6)))
        start = rng.randint(0, len(text))
        span = rng.randint(1, 700)
        windows.clear()
        assert _find(joined, needle, start, span) == text.find(needle, start)
        assert windows and max(windows) <= span + len(needle)


def test_the_longer_tokens_containing_the_candidates_are_found_a_candidate_a_step():
    """200 candidates over 10,000,000 pieces searched 4 s in one step of the health job; a candidate a
    step, a cancel stops the search at the next."""
    from explorer.core.health.tables import contained_in, iter_contained_in

    pieces = ["a", "ab", "b", "abc", "xab", "c", "bc"] * 30
    ids = list(range(0, 200, 3))
    steps, got = drain(iter_contained_in(pieces, ids))
    assert got == contained_in(pieces, ids) and got[0] == (1, 3, 4, 8, 10)  # longer, higher, with an "a"
    assert len(steps) >= len(ids)
    job = iter_contained_in(pieces, ids)
    next(job), next(job), next(job)
    job.close()
    assert job.gi_frame is None


def test_the_pieces_are_looked_through_a_part_at_a_time_with_the_same_answer(monkeypatch, minilm):
    """The single-byte tokens and the unused tokens are looked for a STEP_PIECES part of the pieces a
    step (10,000,000 pieces: 3.9 s in one step of the health job with the pieces' array); a cancel
    stops the job inside them, and the report is the same."""
    from explorer.core.health import tables

    table, whole = minilm
    monkeypatch.setattr(tables, "STEP_PIECES", 4096)
    steps, parts = drain(iter_health(table))
    messages = [m for _, m in steps]
    assert messages.count("Looking for the tokenizer's unused tokens…") >= table.vocab_size // 4096
    assert messages.count("Looking for the single-byte tokens…") >= table.vocab_size // 4096
    unused = [i for i in range(table.vocab_size) if _UNUSED.fullmatch(table.piece(i))]
    assert list(parts.reference.ids) == unused == list(whole.reference.ids)
    assert parts.byte_tokens == whole.byte_tokens
    np.testing.assert_array_equal(parts.order, whole.order)
    job = iter_health(table)
    for _, message in job:
        if message.startswith("Looking for the tokenizer's unused tokens"):
            break
    job.close()
    assert job.gi_frame is None
