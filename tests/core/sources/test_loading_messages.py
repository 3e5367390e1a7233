"""Issue 25, item 11: the load says what the time goes to ("Drawing the overview…"
showed while a 2 GB random table was being generated)."""

from __future__ import annotations

from explorer.core.matrix.overview import overview_row_step
from explorer.core.sources.loading import load_model


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
