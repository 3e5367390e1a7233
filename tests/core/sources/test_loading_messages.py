"""Issue 25, item 11: the load says what the time goes to ("Drawing the overview…"
showed while a 2 GB random table was being generated)."""

from __future__ import annotations

from explorer.core.matrix.overview import overview_row_step
from explorer.core.sources.loading import load_model
from tests.support.jobs import drain


def _messages(spec: str) -> list[str]:
    out = []
    gen = load_model(spec)
    try:
        while True:
            out.append(next(gen)[1])
    except StopIteration as stop:
        assert stop.value.table.spec == spec
    return out


def test_a_random_table_says_its_rows_are_being_drawn():
    v = 40_000
    messages = _messages(f"random:{v}x16")
    sampled = len(range(0, v, overview_row_step(v)))
    overview = [m for m in messages if "overview" in m]
    assert overview and all(m.startswith("Drawing random N(0, σ²) rows for the overview") for m in overview)
    assert overview[-1].endswith(f"{sampled:,} of {sampled:,}…")
    assert not any("Drawing the overview" in m for m in messages)


def test_a_model_file_says_its_rows_are_being_read():
    messages = _messages("default")
    assert any(m.startswith("Reading rows for the overview") for m in messages)
    assert not any("random" in m for m in messages)


def test_opening_a_model_does_not_list_its_vocabulary():
    """The search boxes' list of pieces (a second of Python for SmolLM2, beside the window's
    paints) is made when a box is first used, not while the model opens; chunked, it equals
    the list made at once."""
    from explorer.core.jobs import run_to_end

    gen = load_model("default")
    progress = []
    try:
        while True:
            progress.append(next(gen))
    except StopIteration as stop:
        table = stop.value.table
    assert not any("vocabulary for the search" in m for _, m in progress)
    assert table._memo.completions is None
    assert table.tokenizer._pieces is not None  # the id -> piece map is made here, off the GUI thread
    steps = []
    listed = run_to_end(table.iter_completion_pieces(chunk=1000), steps.append)
    rows = table.trained_rows
    assert [f for f, _ in steps] == [start / rows for start in range(0, rows, 1000)]
    assert listed == sorted({table.shown_piece(i).text for i in range(rows)})
    assert table.completion_pieces() is listed  # kept: asked again, not listed again


def test_the_load_reads_and_normalises_the_rows_in_bounded_steps(monkeypatch):
    """The whole table and its unit rows were one step each (1.4 s for a random 50,257 x 768):
    now a chance to stop after every STEP_VALUES values, and the same arrays as read whole."""
    import numpy as np

    from explorer.core.sources import table as table_module
    from explorer.core.sources.specs import open_table

    monkeypatch.setattr(table_module, "STEP_VALUES", 64 * 1024)  # 256 rows of 256 a step
    messages = _messages("random:3000x256")
    assert messages.count("Reading rows…") >= 3000 // 256
    assert messages.count("Normalising rows for neighbour search…") >= 3000 // 256

    table = open_table("random:3000x256")
    fractions, unit = drain(table.iter_unit_matrix())
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert table.unit_matrix() is unit  # kept, as unit_matrix keeps it
    rows = open_table("random:3000x256").matrix()  # read whole, in the table's own blocks
    np.testing.assert_array_equal(table.matrix(), rows)
    want = rows / np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64)).astype(np.float32)[:, None]
    np.testing.assert_allclose(unit, want, rtol=1e-6)
    assert not unit.flags.writeable


def test_a_load_closed_while_it_reads_the_rows_stops_there(monkeypatch):
    from explorer.core.sources import table as table_module

    monkeypatch.setattr(table_module, "STEP_VALUES", 64 * 1024)
    job = load_model("random:3000x256")
    for _, message in job:
        if message == "Reading rows…":
            break
    job.close()  # a cancel: the worker ends the generator at its yield
    assert job.gi_frame is None
