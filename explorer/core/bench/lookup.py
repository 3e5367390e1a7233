"""Gather versus one-hot @ E versus a bias-free nn.Linear on one-hot inputs,
timed on a loaded table (FACTS.md, "Cost of the two ways to look up").

The results are :class:`LookupMeasurement` (one :class:`BatchTiming` per
batch size). Every time is the best (minimum) of several runs, the median
beside it as the spread. A busy machine must not fake the lesson (a gather
waiting 8 ms for torch's second thread made one-hot look only 11x slower):
the three paths run at one torch thread, in interleaved rounds, and every
call is checked against its own thread's CPU time; a batch whose best call
still waited for the CPU is measured again, and flagged ``disturbed`` when
it stays so. No Qt here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from explorer.core.bench.timing import REAL_CLOCKS, Clocks, iter_interleaved_times

__all__ = ["BatchTiming", "LookupMeasurement", "iter_bench_lookup", "bench_lookup", "GATHER_REPEATS_FACTOR",
           "MAX_ATTEMPTS", "one_torch_thread"]

#: the gather costs microseconds: it gets this many times as many runs
GATHER_REPEATS_FACTOR = 20
COMPUTE_DTYPE = "float32"
#: a batch whose best calls waited for the CPU is measured up to this many times in all
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class BatchTiming:
    """The three paths timed for one batch of ``batch`` random ids.

    Attributes
    ----------
    batch : int
        Ids looked up per call.
    gather_s, onehot_s, linear_s : float
        Best time per call in seconds of ``F.embedding(ids, E)``,
        ``F.one_hot(ids, V).float() @ E`` and ``nn.Linear(V, d, bias=False)``
        (weight E.T) on the one-hot rows; the one-hot rows are built inside
        the timed call.
    agree : bool
        The three outputs are equal, value for value (``torch.equal``).
    onehot_flops : int
        2 * V * d * batch: a multiply and an add for every entry of E, per id.
    gather_median_s, onehot_median_s, linear_median_s : float
        Median time per call of the same runs (the spread beside the best).
    disturbed : bool
        Even after :data:`MAX_ATTEMPTS` measurements, a best call spent most
        of its time waiting for a CPU (wall time well over its thread's CPU
        time): the machine was busy and the figures may be inflated.
    attempts : int
        How many times the batch was measured (more than 1: it was disturbed).
    """

    batch: int
    gather_s: float
    onehot_s: float
    linear_s: float
    agree: bool
    onehot_flops: int
    gather_median_s: float = 0.0
    onehot_median_s: float = 0.0
    linear_median_s: float = 0.0
    disturbed: bool = False
    attempts: int = 1

    @property
    def ratio(self) -> float:
        """onehot_s / gather_s: how many times as long the one-hot product takes."""
        return self.onehot_s / self.gather_s if self.gather_s > 0 else float("inf")

    @property
    def linear_ratio(self) -> float:
        """linear_s / gather_s."""
        return self.linear_s / self.gather_s if self.gather_s > 0 else float("inf")

    def as_json(self) -> dict:
        return {**dataclasses.asdict(self), "ratio": self.ratio, "linear_ratio": self.linear_ratio}


@dataclass(frozen=True)
class LookupMeasurement:
    """The lookup timed on one table.

    Attributes
    ----------
    spec : str or None
        The table's spec.
    vocab_size, dim : int
        V and d of E.
    stored_dtype : str
        The table's element type as stored (float32, bfloat16, Q8_0, ...):
        the layout the timings were taken on.
    compute_dtype : str
        What E was converted to for the timings (float32).
    threads : int
        torch's intra-op threads during the measurement (1: a busy second
        core cannot make a call wait for a helper thread).
    repeats, gather_repeats : int
        Timed runs per figure (the best is kept); the gather gets more.
    prepare_s : float
        Seconds to turn the table into a float32 (V, d) tensor (not timed below).
    finite : bool
        Every value of E is finite (an inf or NaN makes the paths disagree).
    batches : tuple of BatchTiming
        One per batch size, in the order asked.
    notes : tuple of str
    """

    spec: str | None
    vocab_size: int
    dim: int
    stored_dtype: str
    compute_dtype: str
    threads: int
    repeats: int
    gather_repeats: int
    prepare_s: float
    finite: bool
    batches: tuple[BatchTiming, ...]
    notes: tuple[str, ...] = ()

    @property
    def agree(self) -> bool:
        """The three paths gave equal outputs for every batch."""
        return all(b.agree for b in self.batches)

    @property
    def disturbed(self) -> bool:
        """Some batch stayed disturbed by a busy machine (see :attr:`BatchTiming.disturbed`)."""
        return any(b.disturbed for b in self.batches)

    def as_json(self) -> dict:
        """Plain data for ``bench --json`` (the keys the benchmark always had)."""
        out = dataclasses.asdict(self)
        out["batches"] = [b.as_json() for b in self.batches]
        out["notes"] = list(self.notes)
        out["disturbed"] = self.disturbed
        return out


@contextlib.contextmanager
def one_torch_thread():
    """torch at one intra-op thread inside the block, its former count restored
    after. (Only ``set_num_threads``: ``set_num_interop_threads`` may be
    called once per process and is left alone.)"""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _batch_message(b: int, attempt: int) -> str:
    tokens = f"{b:,} token{'s' if b != 1 else ''}"
    again = f" again (attempt {attempt} of {MAX_ATTEMPTS}: the machine was busy)" if attempt > 1 else ""
    return f"Timing gather, one-hot @ E and nn.Linear in turn for {tokens}{again}…"


def _time_batch(e, linear, ids, repeats: int, attempt: int, lo: float, span: float,
                clocks: Clocks) -> Iterator[tuple[float, str]]:
    """The three paths on one batch, interleaved; yields progress from ``lo`` over
    ``span`` (a second attempt stays at the end), returns name -> Timed."""
    import torch
    import torch.nn.functional as F

    v = int(e.shape[0])
    fns = {"gather": lambda: F.embedding(ids, e),
           "onehot": lambda: F.one_hot(ids, v).float() @ e,
           "linear": lambda: linear(F.one_hot(ids, v).float())}
    rounds = iter_interleaved_times(fns, repeats, calls={"gather": GATHER_REPEATS_FACTOR}, clocks=clocks)
    message = _batch_message(int(ids.shape[0]), attempt)
    try:
        while True:
            with torch.no_grad():  # a round at a time, never across a yield (see knn_graph_job)
                done = next(rounds)
            yield lo + span * (done / repeats if attempt == 1 else 1.0), message
    except StopIteration as stop:
        return stop.value


def _disturbed_note(timings: Sequence[BatchTiming]) -> tuple[str, ...]:
    busy = [t for t in timings if t.disturbed]
    if not busy:
        return ()
    which = ", ".join(f"{t.batch:,}" for t in busy)
    return (f"The machine was busy while measuring (batch {which}): even the shortest calls waited for a CPU "
            f"after {MAX_ATTEMPTS} attempts, so these times may be inflated and the ratio is not the lesson. "
            "Measure again when the machine is quiet.",)


def iter_bench_lookup(table, batch_sizes: Sequence[int] = (1, 64), repeats: int = 5,
                      seed: int = 0, clocks: Clocks = REAL_CLOCKS) -> Iterator[tuple[float, str]]:
    """Time gather, one-hot @ E and a bias-free nn.Linear on one-hot inputs.

    A generator for a worker: yields ``(fraction, message)`` progress and
    returns a :class:`LookupMeasurement`. Stop it between yields to cancel.

    E is ``table.torch_table()`` as float32 (V, d). Torch runs at one
    intra-op thread (restored after). Each figure is the best of
    ``repeats`` interleaved rounds after one warm-up (the gather, costing
    microseconds, gets :data:`GATHER_REPEATS_FACTOR` calls per round); ids
    are random (seeded) in 0..V-1. A batch whose best call waited for the
    CPU is measured again, up to :data:`MAX_ATTEMPTS` times; the best of
    the attempts is kept, and flagged ``disturbed`` (with a note) if it
    still waited.

    Parameters
    ----------
    table : EmbeddingTable
    batch_sizes : sequence of int
        Ids per lookup (one 1-D batch each).
    repeats : int
        Timed rounds per attempt.
    seed : int
        Seed of the random ids.
    clocks : Clocks
        The wall and CPU clocks the calls are timed by (tests play a busy
        machine with clocks of their own).
    """
    import torch

    repeats = max(1, int(repeats))
    batch_sizes = [int(b) for b in batch_sizes]
    yield 0.0, f"Preparing the table as a {COMPUTE_DTYPE} tensor…"
    t0 = time.perf_counter()
    e = table.torch_table().detach().to(torch.float32).contiguous()
    prepare_s = time.perf_counter() - t0
    v, d = (int(n) for n in e.shape)
    linear = torch.nn.Linear(v, d, bias=False)
    with torch.no_grad():
        # weight (d, V) = E.T: x @ weight.T = x @ E; shares E's storage
        linear.weight = torch.nn.Parameter(e.T, requires_grad=False)
    gen = torch.Generator().manual_seed(seed)
    finite = bool(torch.isfinite(e).all())
    timings = []
    with one_torch_thread():  # grad mode: _time_batch turns it off a round at a time, never across a yield
        threads = torch.get_num_threads()
        for k, b in enumerate(batch_sizes):
            ids = torch.randint(0, v, (b,), generator=gen)
            best: dict | None = None
            attempt = 0
            while attempt < MAX_ATTEMPTS and (best is None or any(t.disturbed for t in best.values())):
                attempt += 1
                span = 0.9 / len(batch_sizes)
                timed = yield from _time_batch(e, linear, ids, repeats, attempt, 0.1 + k * span, span, clocks)
                best = timed if best is None else {n: best[n].merged(t) for n, t in timed.items()}
            g, o, lin = (best[n].result for n in ("gather", "onehot", "linear"))
            agree = bool(torch.equal(g, o) and torch.equal(g, lin))
            timings.append(BatchTiming(
                b, best["gather"].best_s, best["onehot"].best_s, best["linear"].best_s, agree, 2 * v * d * b,
                best["gather"].median_s, best["onehot"].median_s, best["linear"].median_s,
                any(t.disturbed for t in best.values()), attempt))
    yield 1.0, "Done"
    notes = () if finite else (
        "The table holds inf or NaN: one-hot @ E turns those columns into NaN, so the paths disagree.",)
    return LookupMeasurement(
        spec=getattr(table, "spec", None), vocab_size=v, dim=d, stored_dtype=str(table.dtype),
        compute_dtype=COMPUTE_DTYPE, threads=threads, repeats=repeats,
        gather_repeats=repeats * GATHER_REPEATS_FACTOR, prepare_s=prepare_s, finite=finite,
        batches=tuple(timings), notes=notes + _disturbed_note(timings),
    )


def bench_lookup(table, batch_sizes: Sequence[int] = (1, 64), repeats: int = 5, seed: int = 0,
                 clocks: Clocks = REAL_CLOCKS) -> LookupMeasurement:
    """:func:`iter_bench_lookup` run to its end (for the command line)."""
    gen = iter_bench_lookup(table, batch_sizes, repeats, seed, clocks)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
