"""The lookup animation's frame model (explorer.core.lookup.animation): counters
against the formulas of FACTS.md, steps, and the compressed strip."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.core.lookup import animation

V_GPT2, D_GPT2 = 50_257, 768


def test_end_of_walk_counters_equal_the_formulas_gpt2():
    s = animation.make_schedule(V_GPT2, D_GPT2, 42)
    f = s.frame(s.total_s)
    assert f.finished
    assert f.flops == 77_194_752 == 2 * V_GPT2 * D_GPT2
    assert f.multiply_adds == V_GPT2 * D_GPT2
    assert f.zero_multiply_adds == 38_596_608 == (V_GPT2 - 1) * D_GPT2
    assert f.work_left == 0
    assert f.output_filled == D_GPT2
    assert f.gather_phase == 3 and f.gather_values == D_GPT2


def test_big_walk_is_watchable_and_slows_around_the_hot_row():
    hot = 30_000
    s = animation.make_schedule(V_GPT2, D_GPT2, hot)
    assert 5 < s.total_s < 25  # seconds at speed 1
    assert s.duration(hot) > 100 * s.duration(10_000)  # far rows race, the hot one is held
    assert s.duration(hot + 1) > 50 * s.duration(hot + 5_000)
    # halfway in time the walk is somewhere in the middle rows, not stuck at the start
    mid = s.frame(s.total_s / 2)
    assert 100 < mid.rows_done < V_GPT2 - 100


def test_start_of_walk_nothing_done():
    s = animation.make_schedule(6, 4, 1)
    f = s.frame(0.0)
    assert f.multiply_adds == 0 and f.flops == 0 and f.work_left == 6 * 4
    assert f.current_row == 0 and not f.finished and f.output_filled == 0


@settings(max_examples=80, deadline=None)
@given(v=st.integers(1, 3000), d=st.integers(1, 64), data=st.data())
def test_counters_are_consistent_at_any_time(v, d, data):
    hot = data.draw(st.integers(0, v - 1))
    s = animation.make_schedule(v, d, hot)
    t = data.draw(st.floats(0, s.total_s * 1.2, allow_nan=False))
    f = s.frame(t)
    assert f.multiply_adds + f.work_left == v * d
    assert f.flops == 2 * f.multiply_adds
    assert 0 <= f.zero_multiply_adds <= f.multiply_adds
    # exactly the hot row's multiply-adds are not by zero
    assert f.multiply_adds - f.zero_multiply_adds == f.output_filled
    assert f.output_filled == (d if f.rows_done > hot else (f.columns_done if f.current_row == hot else 0))
    end = s.frame(s.total_s)
    assert (end.flops, end.zero_multiply_adds) == (2 * v * d, (v - 1) * d)


def test_frames_are_monotonic_in_time():
    s = animation.make_schedule(5_000, 16, 2_500)
    ts = np.linspace(0, s.total_s, 400)
    done = [s.frame(t).multiply_adds for t in ts]
    assert all(a <= b for a, b in zip(done, done[1:]))


def test_steps_visit_every_row_of_a_small_table_and_stop_on_the_hot_row():
    s = animation.make_schedule(6, 4, 3)
    t, rows = 0.0, []
    while t < s.total_s:
        t = s.next_stop(t)
        rows.append(s.frame(t).rows_done)
    assert rows == [1, 2, 3, 4, 5, 6]


def test_steps_on_a_big_table_never_jump_over_the_hot_row():
    hot = 20_000
    s = animation.make_schedule(V_GPT2, D_GPT2, hot)
    t, stops = 0.0, []
    while t < s.total_s:
        t = s.next_stop(t)
        stops.append(s.frame(t).rows_done)
    assert hot in stops and hot + 1 in stops  # just before and just after the hot row
    assert len(stops) < 200  # blocks, not 50,257 clicks
    assert stops[-1] == V_GPT2


def test_strip_states():
    s = animation.make_schedule(1_000, 8, 700)
    f = s.frame(s.row_start(500) + 1e-9)
    st_ = animation.strip_states(f, 1_000, 700, 100)
    assert st_.shape == (100,)
    assert (st_[:40] == animation.WASTED).all()
    assert st_[49] == animation.SWEEP  # the block being multiplied now
    assert st_[70] == animation.HOT
    assert (st_[75:] == animation.PENDING).all()
    assert animation.strip_states(f, 4, 2, 600).shape == (4,)


def test_out_of_range_hot_raises():
    with pytest.raises(IndexError):
        animation.make_schedule(4, 3, 4)
    with pytest.raises(ValueError):
        animation.make_schedule(0, 3, 0)


def test_playhead_runs_from_the_clock_and_stands_still_when_paused():
    clock = animation.ManualClock(100.0)
    p = animation.Playhead(10.0, clock=clock)
    assert p.time() == 0.0 and not p.playing
    clock.advance(3.0)
    assert p.time() == 0.0  # not playing yet
    p.play()
    clock.advance(2.5)
    assert p.time() == pytest.approx(2.5)
    p.set_speed(4.0)
    clock.advance(1.0)
    assert p.time() == pytest.approx(6.5)
    p.pause()
    clock.advance(50.0)
    assert p.time() == pytest.approx(6.5) and not p.playing
    p.play()
    clock.advance(50.0)
    assert p.time() == 10.0 and p.finished  # never past the end
    p.play()  # at the end: from the start again
    assert p.time() == 0.0 and p.playing


def test_playhead_seek_and_suspend_do_not_jump():
    clock = animation.ManualClock(100.0)
    p = animation.Playhead(10.0, clock=clock)
    p.play()
    p.seek(4.0)
    clock.advance(1.0)
    assert p.time() == pytest.approx(5.0)
    p.suspend()  # hidden: time holds, still "playing"
    clock.advance(30.0)
    assert p.time() == pytest.approx(5.0) and p.playing
    p.resume()
    clock.advance(1.0)
    assert p.time() == pytest.approx(6.0)
    p.seek(-3.0)
    assert p.time() == 0.0
    p.reset(2.0)
    assert p.end == 2.0 and p.time() == 0.0 and p.playing


def test_row_window_of_a_small_table_is_the_whole_table():
    w = animation.row_window(6, 4)
    assert list(w.ids) == list(range(6)) and list(w.positions) == list(range(6))
    assert w.gap is None and w.n_display == 6


@pytest.mark.parametrize("hot", [0, 3, 5, 100, 30_000, V_GPT2 - 1])
def test_row_window_shows_the_start_a_gap_and_the_hot_row(hot):
    w = animation.row_window(V_GPT2, hot)
    ids = list(w.ids)
    assert hot in ids and ids == sorted(set(ids))
    assert ids[:2] == [0, 1]  # where the walk starts
    assert len(ids) <= w.n_display <= 2 + 1 + 2 * animation.ZOOM_HALF + 1  # a gap row at most
    k = ids.index(hot)
    assert ids[max(0, k - 1)] >= hot - animation.ZOOM_HALF  # rows around the hot one are shown
    if w.gap is None:
        assert ids == list(range(len(ids))) and list(w.positions) == ids
    else:
        first, last = w.gap
        assert first == 2 and last == ids[2] - 1 and last >= first
        assert w.gap_position == 2 and list(w.positions) == [0, 1] + list(range(3, w.n_display))
    with pytest.raises(IndexError):
        animation.row_window(V_GPT2, V_GPT2)


def reference_durations(v: int, hot: int) -> np.ndarray:
    """Every row's duration by the schedule's formula, for the whole table at once."""
    r = np.arange(v, dtype=np.float64)
    floor = min(animation.ROW_SECONDS, animation.FAR_SECONDS / v)
    reach = animation.SLOW_REACH
    near = np.maximum(np.where(np.abs(r - hot) > reach, 0.0, 1 / (1 + ((r - hot) / animation.SLOW_WIDTH) ** 2)),
                      np.where(r > reach, 0.0, 1 / (1 + (r / animation.SLOW_WIDTH) ** 2)))
    dt = floor + (animation.ROW_SECONDS - floor) * near
    dt[hot] = animation.ROW_SECONDS * animation.HOT_HOLD
    return dt


def test_a_schedule_of_many_rows_is_worked_out_a_block_at_a_time_with_the_same_ends():
    """10,000,000 rows took 2.4 s of whole-table arrays on the window's thread; blocks of
    SCHEDULE_BLOCK rows give the formula's durations and their running sum, and a time on either
    side of a block's end finds the row it belongs to."""
    v, hot, block = 200_000, 150_001, animation.SCHEDULE_BLOCK
    s = animation.make_schedule(v, 16, hot)
    dt = reference_durations(v, hot)
    ends = np.cumsum(dt)
    rows = np.r_[0, block - 1, block, 2 * block + 7, hot - 1, hot, hot + 1, v - 1]
    np.testing.assert_allclose([s.duration(i) for i in rows], dt[rows], rtol=1e-14)
    np.testing.assert_allclose([s.end(i) for i in rows], ends[rows], rtol=1e-12)
    assert s.total_s == pytest.approx(ends[-1], rel=1e-12)
    for b in (1, 2, 3):
        edge = s.end(b * block - 1)
        assert s.rows_done_at(edge) == b * block and s.rows_done_at(np.nextafter(edge, 0)) == b * block - 1
    ts = np.random.default_rng(0).uniform(0, s.total_s, 500)
    got = np.array([s.rows_done_at(t) for t in ts])
    assert np.abs(got - np.searchsorted(ends, ts, side="right")).max() <= 1  # rounding at a row's end at most
    assert max(len(a) for a in s._kept[1:]) <= block  # no array of every row


def test_blocks_out_of_the_slowed_rows_reach_are_summed_once(monkeypatch):
    """Rows far from the first and the hot row race at the floor: a schedule of 10,000,000 rows
    worked out every block's durations on the window's thread (a tab switch to the Lookup stalled
    533 ms in a walk); the blocks out of reach share one sum, and the rows keep the formula's
    durations and ends."""
    calls = []
    durations = animation.WalkSchedule._durations
    monkeypatch.setattr(animation.WalkSchedule, "_durations", lambda self, start: calls.append(start) or
                        durations(self, start))
    s = animation.make_schedule(10_000_000, 1, 5_000_000)
    assert len(calls) <= 8  # the first blocks, those around the hot row, one far block and the last
    assert s.duration(9_000_000) == min(animation.ROW_SECONDS, animation.FAR_SECONDS / 10_000_000)
    v, hot = 1_000_000, 600_003
    s = animation.make_schedule(v, 4, hot)
    dt = reference_durations(v, hot)
    ends = np.cumsum(dt)
    rows = np.r_[0, 3, 70_000, 300_000, hot - 70_000, hot - 5, hot, hot + 65_536, hot + 65_537, v - 1]
    np.testing.assert_allclose([s.duration(i) for i in rows], dt[rows], rtol=1e-14)
    # a running sum of a million rows rounds differently from one of a block at a time (1e-12 apart),
    # far less than a row at the floor (6 us of 5-15 s: 1e-6)
    np.testing.assert_allclose([s.end(i) for i in rows], ends[rows], rtol=1e-10)
    assert s.total_s == pytest.approx(ends[-1], rel=1e-10)
    ts = np.random.default_rng(1).uniform(0, s.total_s, 500)
    got = np.array([s.rows_done_at(t) for t in ts])
    assert np.abs(got - np.searchsorted(ends, ts, side="right")).max() <= 1
