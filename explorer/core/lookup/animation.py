"""The frame model of the lookup animation: which row of E the one-hot
product is multiplying at a given moment, and what has been counted so far.

The one-hot path walks through all V rows of E, multiplying row r by the
one-hot entry x[r] (0 everywhere except x[hot] = 1) and adding the result to
the output. The pointer path computes one address, jumps and copies d values.

Time is continuous: a frame is a pure function of the elapsed (speed-scaled)
seconds, so an animation driven by a clock and one driven by ``seek`` show
the same thing; :class:`Playhead` turns a clock (injectable, so tests move it
by hand) into that time. Each row gets its own duration: slow for the first rows and
around the hot row, fast (thousands of rows per second) elsewhere, so a walk
over 50,000 rows still lasts a few seconds and the hot row can be watched.
Which rows of E a zoomed picture of the walk shows is :func:`row_window`.
No Qt here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Frame", "WalkSchedule", "make_schedule", "strip_states", "Playhead", "ManualClock", "RowWindow",
           "row_window",
           "PENDING", "WASTED", "HOT", "SWEEP"]

#: seconds one row takes when it is shown row by row (speed 1)
ROW_SECONDS = 0.6
#: seconds all the far-away rows of a big table take together (speed 1)
FAR_SECONDS = 6.0
#: rows either side of the hot row (and after the start) that are slowed down
SLOW_WIDTH = 3.0
#: rows of a schedule worked out together (:class:`WalkSchedule`)
SCHEDULE_BLOCK = 1 << 16
#: a row farther than this from the hot row and from the first row is not slowed at all: its slowing
#: (0.6 s x 3² / r², 1.3 ns at this distance) left out shortens a whole walk by 0.25 ms at most (three
#: tails of 0.6 s x 3² / 65,536 each), and the blocks of rows that far share one set of durations
SLOW_REACH = SCHEDULE_BLOCK
#: the hot row is held this many times longer, so its product can be seen
HOT_HOLD = 2.0
#: rows swept during the last RECENT_SECONDS form the "current block"
RECENT_SECONDS = 0.15
#: the pointer path: compute the address, jump, copy (seconds at speed 1)
GATHER_PHASES = (0.6, 0.5, 0.7)
#: a step moves on by at least this many seconds of animation (whole rows)
STEP_SECONDS = 0.3

# states of a one-hot strip bin (see strip_states)
PENDING, WASTED, SWEEP, HOT = 0, 1, 2, 3


@dataclass(frozen=True)
class Frame:
    """What both paths have done after ``t`` seconds of animation.

    Counters count multiply-adds (one multiply and one add: 2 FLOPs).
    """

    t: float
    total_s: float
    finished: bool
    #: rows of E fully multiplied (0..V)
    rows_done: int
    #: the row being multiplied now (V when finished)
    current_row: int
    #: columns of the current row already multiplied (0..d)
    columns_done: int
    #: first row of the block swept during the last RECENT_SECONDS
    recent_start: int
    multiply_adds: int
    zero_multiply_adds: int
    flops: int
    #: multiply-adds still to do: V*d - multiply_adds
    work_left: int
    #: entries of the one-hot output already holding E[hot] (0..d)
    output_filled: int
    #: pointer path: 0 address, 1 jump, 2 copy, 3 done
    gather_phase: int
    #: progress inside the current gather phase, 0..1
    gather_progress: float
    #: values of the row copied so far by the pointer path (0..d)
    gather_values: int

    @property
    def fraction(self) -> float:
        return 1.0 if self.total_s <= 0 else min(1.0, self.t / self.total_s)


class WalkSchedule:
    """Row durations of one walk over a V x d table with a 1 at ``hot``.

    Row ``r`` lasts ``floor + (row_s - floor) * max(1 / (1 + ((r - hot) / width)^2),
    1 / (1 + (r / width)^2))`` seconds at speed 1 (the hot row :data:`HOT_HOLD` times
    ``row_s``; a term whose row is more than :data:`SLOW_REACH` rows away counts 0), and
    ends when the rows up to it have all lasted theirs (:meth:`end`). The durations are
    worked out a block of :data:`SCHEDULE_BLOCK` rows at a time, when a time falls in that
    block (the last block used is kept): for 10,000,000 rows, the arrays of every row took
    2.4 s on the window's thread, and each block's sum in turn 0.2-0.5 s (a tab switch to
    the Lookup stalled 533 ms in a walk); a block wholly out of reach is all ``floor``,
    summed once.
    """

    def __init__(self, vocab_size: int, dim: int, hot: int, row_s: float = ROW_SECONDS,
                 far_s: float = FAR_SECONDS, width: float = SLOW_WIDTH):
        v, d, hot = int(vocab_size), int(dim), int(hot)
        if v < 1 or d < 1:
            raise ValueError("the table needs at least one row and one column")
        if not 0 <= hot < v:
            raise IndexError(f"token id {hot:,} is out of range: rows 0 to {v - 1:,}")
        self.vocab_size, self.dim, self.hot = v, d, hot
        self._row_s, self._width = row_s, width
        self._floor = min(row_s, far_s / v)
        self._kept: tuple[int, np.ndarray, np.ndarray] | None = None
        # each block's end: its offset plus the last of its own cumulative sums, the very sums
        # _block adds to the offset, so that a time on either side of a block's end finds it
        offsets = []
        end = 0.0
        far_sum = None  # the sum of a whole block out of reach (every such block has the same)
        for start in range(0, v, SCHEDULE_BLOCK):
            if self._out_of_reach(start) and start + SCHEDULE_BLOCK <= v:
                if far_sum is None:
                    far_sum = float(np.cumsum(self._durations(start))[-1])
                end = end + far_sum
            else:
                end = end + float(np.cumsum(self._durations(start))[-1])
            offsets.append(end)
        self._block_ends = np.asarray(offsets)
        self.total_s = float(self._block_ends[-1])
        self.gather_ends = np.cumsum(GATHER_PHASES)

    def _out_of_reach(self, start: int) -> bool:
        """Every row of the block from ``start`` is more than SLOW_REACH rows from row 0 and the hot row."""
        stop = min(start + SCHEDULE_BLOCK, self.vocab_size)
        return start > SLOW_REACH and (stop - 1 < self.hot - SLOW_REACH or start > self.hot + SLOW_REACH)

    def _durations(self, start: int) -> np.ndarray:
        """Durations of the rows of the block from ``start``, worked out in place."""
        stop = min(start + SCHEDULE_BLOCK, self.vocab_size)
        if self._out_of_reach(start):
            return np.full(stop - start, self._floor)
        rows = np.arange(start, stop, dtype=np.float64)
        other = rows / self._width
        dt = rows - self.hot
        dt /= self._width
        for x in (dt, other):
            np.square(x, out=x)
            x += 1.0
            np.reciprocal(x, out=x)
        dt[np.abs(rows - self.hot) > SLOW_REACH] = 0.0
        other[rows > SLOW_REACH] = 0.0
        np.maximum(dt, other, out=dt)
        dt *= self._row_s - self._floor
        dt += self._floor
        if start <= self.hot < stop:
            dt[self.hot - start] = self._row_s * HOT_HOLD
        return dt

    def _block(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(durations, ends) of the rows of block ``b``."""
        if self._kept is None or self._kept[0] != b:
            dt = self._durations(b * SCHEDULE_BLOCK)
            ends = np.cumsum(dt)
            if b:
                ends += self._block_ends[b - 1]
            self._kept = (b, dt, ends)
        return self._kept[1], self._kept[2]

    def duration(self, row: int) -> float:
        """Seconds row ``row`` takes (speed 1)."""
        b, k = divmod(int(row), SCHEDULE_BLOCK)
        return float(self._block(b)[0][k])

    def end(self, row: int) -> float:
        """Seconds at which row ``row`` is fully multiplied (speed 1)."""
        b, k = divmod(int(row), SCHEDULE_BLOCK)
        return float(self._block(b)[1][k])

    def _search(self, t: float, side: str) -> int:
        """``np.searchsorted`` of ``t`` in the ends of every row."""
        b = int(np.searchsorted(self._block_ends, t, side=side))
        if b >= len(self._block_ends):
            return self.vocab_size
        return b * SCHEDULE_BLOCK + int(np.searchsorted(self._block(b)[1], t, side=side))

    # -- time <-> rows ----------------------------------------------------------------
    def rows_done_at(self, t: float) -> int:
        """Rows fully multiplied after ``t`` seconds."""
        return self._search(t, "right")

    def time_at_fraction(self, fraction: float) -> float:
        return float(np.clip(fraction, 0.0, 1.0)) * self.total_s

    def row_start(self, row: int) -> float:
        """Seconds at which row ``row`` starts being multiplied."""
        return 0.0 if row <= 0 else self.end(min(row, self.vocab_size) - 1)

    def next_stop(self, t: float) -> float:
        """Where one "step" from ``t`` lands: the end of the current row, or
        of a block of rows lasting at least STEP_SECONDS; never past the
        start or the end of the hot row, so the hot row is always one step."""
        if t >= self.total_s:
            return self.total_s
        r = self.rows_done_at(t)
        target = t + STEP_SECONDS
        k = max(self._search(target, "left"), r)
        stop = self.end(min(k, self.vocab_size - 1))
        for forced in (self.row_start(self.hot), self.end(self.hot)):
            if t < forced < stop:
                stop = forced
        return stop

    # -- frames ---------------------------------------------------------------------
    def frame(self, t: float) -> Frame:
        """The state of both paths after ``t`` seconds (speed 1)."""
        v, d, hot = self.vocab_size, self.dim, self.hot
        t = float(min(max(t, 0.0), self.total_s))
        done = self.rows_done_at(t)
        finished = done >= v
        if finished:
            current, cols = v, 0
        else:
            current = done
            start = self.row_start(current)
            frac = (t - start) / self.duration(current)
            cols = int(np.clip(np.floor(frac * d), 0, d - 1))
        mult = done * d + cols
        hot_part = d if hot < done else (cols if current == hot else 0)
        zero = mult - hot_part
        recent = min(self.rows_done_at(t - RECENT_SECONDS), current)
        phase = int(np.searchsorted(self.gather_ends, t, side="right"))
        if phase >= 3:
            g_prog = 1.0
            phase = 3
        else:
            p0 = 0.0 if phase == 0 else float(self.gather_ends[phase - 1])
            g_prog = (t - p0) / GATHER_PHASES[phase]
        g_vals = d if phase >= 3 else (int(np.floor(g_prog * d)) if phase == 2 else 0)
        return Frame(
            t=t, total_s=self.total_s, finished=finished, rows_done=done, current_row=current,
            columns_done=cols, recent_start=recent, multiply_adds=mult, zero_multiply_adds=zero,
            flops=2 * mult, work_left=v * d - mult, output_filled=hot_part, gather_phase=phase,
            gather_progress=float(g_prog), gather_values=g_vals,
        )


def make_schedule(vocab_size: int, dim: int, hot: int) -> WalkSchedule:
    """The schedule of a walk over a V x d table whose one-hot 1 is at ``hot``."""
    return WalkSchedule(vocab_size, dim, hot)


def strip_states(frame: Frame, vocab_size: int, hot: int, bins: int) -> np.ndarray:
    """The one-hot vector compressed to ``bins`` bins (for a strip of pixels).

    Returns
    -------
    np.ndarray, shape (min(bins, V),), uint8
        Per bin: PENDING (not multiplied yet), WASTED (multiplied by 0),
        SWEEP (in the block being multiplied now), HOT (holds the 1).
    """
    v = int(vocab_size)
    n = max(1, min(int(bins), v))
    edges = np.linspace(0, v, n + 1)
    out = np.full(n, PENDING, np.uint8)
    out[edges[1:] <= frame.rows_done] = WASTED
    # the bin holding the current row and the recent block are "being swept"
    if not frame.finished:
        lo = int(np.searchsorted(edges, frame.recent_start, side="right")) - 1
        hi = int(np.searchsorted(edges, frame.current_row, side="right")) - 1
        out[max(lo, 0): min(hi, n - 1) + 1] = SWEEP
    hb = int(np.clip(np.searchsorted(edges, hot, side="right") - 1, 0, n - 1))
    out[hb] = HOT
    return out


class ManualClock:
    """A clock for :class:`Playhead` that moves only when told (tests, and
    anything that renders frames at chosen times rather than in real time)."""

    def __init__(self, start: float = 0.0):
        self.now = float(start)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += float(seconds)


class Playhead:
    """Where the animation is: seconds of animation time, taken from a clock.

    While playing, time runs at ``speed`` times the clock from the moment of
    the last play, seek or speed change; paused (or suspended) it stands
    still. It never leaves [0, end].

    Parameters
    ----------
    end : float
        Length of the animation in seconds (speed 1).
    clock : callable () -> float
        Seconds from any origin; ``time.perf_counter`` unless a test gives
        one it moves by hand.
    """

    def __init__(self, end: float = 0.0, clock: Callable[[], float] = time.perf_counter):
        self._clock = clock
        self._end = max(0.0, float(end))
        self._t = 0.0
        self._speed = 1.0
        self._playing = False
        self._suspended = False
        self._anchor_clock = clock()
        self._anchor_t = 0.0

    @property
    def end(self) -> float:
        return self._end

    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def speed(self) -> float:
        return self._speed

    def time(self) -> float:
        """The animation time now, in seconds (speed 1)."""
        if not self._playing or self._suspended:
            return self._t
        return min(self._end, self._anchor_t + (self._clock() - self._anchor_clock) * self._speed)

    @property
    def finished(self) -> bool:
        return self.time() >= self._end

    def reset(self, end: float) -> None:
        """A new animation of length ``end``, at its start (playing or not, as before)."""
        self._end = max(0.0, float(end))
        self.seek(0.0)

    def play(self) -> None:
        """Run from the current time (from the start when at the end)."""
        t = self.time()
        self._t = 0.0 if t >= self._end else t
        self._playing = True
        self._anchor()

    def pause(self) -> None:
        self._t = self.time()
        self._playing = False

    def seek(self, t: float) -> None:
        """Jump to ``t`` seconds; keeps playing or paused."""
        self._t = min(max(float(t), 0.0), self._end)
        self._anchor()

    def set_speed(self, speed: float) -> None:
        self._t = self.time()
        self._speed = float(speed)
        self._anchor()

    def suspend(self) -> None:
        """Hold the time without pausing (the picture is not on screen)."""
        self._t = self.time()
        self._suspended = True

    def resume(self) -> None:
        """Carry on from where :meth:`suspend` held the time, without a jump."""
        if self._suspended:
            self._suspended = False
            self._anchor()

    def _anchor(self) -> None:
        self._anchor_clock = self._clock()
        self._anchor_t = self._t


#: rows shown either side of the hot row in the zoomed window
ZOOM_HALF = 2
#: rows shown at the start of the walk before a gap
LEAD_ROWS = 2
#: a table with at most this many rows is shown whole
SMALL_V = 12


@dataclass(frozen=True)
class RowWindow:
    """The rows of E a zoomed picture of the walk shows.

    The first :data:`LEAD_ROWS` rows (where the walk starts), then, when the
    hot row is far from them, a gap row standing for the rows in between,
    then the rows around the hot row. A small table is shown whole.

    Attributes
    ----------
    ids : np.ndarray, shape (n,), int64
        Row ids shown, increasing.
    positions : np.ndarray, shape (n,), int64
        Display row of each id (0 at the top); the gap, if any, has its own.
    gap : tuple (first, last) or None
        Rows left out between the lead rows and the rows around the hot row.
    gap_position : int
        Display row of the gap (-1 without one).
    n_display : int
        Display rows in all (ids and gap).
    """

    ids: np.ndarray
    positions: np.ndarray
    gap: tuple[int, int] | None
    gap_position: int
    n_display: int


def row_window(vocab_size: int, hot: int, half: int = ZOOM_HALF, lead: int = LEAD_ROWS,
               small: int = SMALL_V) -> RowWindow:
    """Which rows of a V-row table to show around ``hot``.

    Rows hot-half .. hot+half (shifted to stay inside the table), after
    the first ``lead`` rows and a gap when they are not adjacent.
    """
    v, hot = int(vocab_size), int(hot)
    if not 0 <= hot < v:
        raise IndexError(f"token id {hot:,} is out of range: rows 0 to {v - 1:,}")
    if v <= small:
        ids = np.arange(v, dtype=np.int64)
        return RowWindow(ids, ids.copy(), None, -1, v)
    width = 2 * half + 1
    lo = max(0, min(hot - half, v - width))
    near = np.arange(lo, lo + width, dtype=np.int64)
    if lo <= lead + 1:  # the lead rows run into the window (at most one row left out: show it)
        ids = np.arange(0, lo + width, dtype=np.int64)
        return RowWindow(ids, ids.copy(), None, -1, len(ids))
    ids = np.concatenate([np.arange(lead, dtype=np.int64), near])
    positions = np.concatenate([np.arange(lead), np.arange(lead + 1, lead + 1 + width)]).astype(np.int64)
    return RowWindow(ids, positions, (lead, lo - 1), lead, lead + 1 + width)
