"""Gather versus one-hot @ E versus a bias-free nn.Linear on one-hot inputs,
timed on a loaded table (FACTS.md, "Cost of the two ways to look up").

The results are :class:`LookupMeasurement` (one :class:`BatchTiming` per
batch size). Every time is the best (minimum) of several runs, never a
median: see :func:`~explorer.core.bench.timing.best_time`. No Qt here.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from explorer.core.bench.timing import best_time

__all__ = ["BatchTiming", "LookupMeasurement", "iter_bench_lookup", "bench_lookup", "GATHER_REPEATS_FACTOR"]

#: the gather costs microseconds: it gets this many times as many runs
GATHER_REPEATS_FACTOR = 20
COMPUTE_DTYPE = "float32"
_PATHS = ("gather", "one-hot @ E", "nn.Linear on one-hot")


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
    """

    batch: int
    gather_s: float
    onehot_s: float
    linear_s: float
    agree: bool
    onehot_flops: int

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
        torch's intra-op threads during the measurement.
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

    def as_json(self) -> dict:
        """Plain data for ``bench --json`` (the keys the benchmark always had)."""
        out = dataclasses.asdict(self)
        out["batches"] = [b.as_json() for b in self.batches]
        out["notes"] = list(self.notes)
        return out


def _step_message(k: int, batch_sizes: Sequence[int]) -> str:
    """What the k-th timing (0-based, three per batch size) is about."""
    b = batch_sizes[k // 3]
    return f"Timing {_PATHS[k % 3]} for {b:,} token{'s' if b != 1 else ''}…"


def iter_bench_lookup(table, batch_sizes: Sequence[int] = (1, 64), repeats: int = 5,
                      seed: int = 0) -> Iterator[tuple[float, str]]:
    """Time gather, one-hot @ E and a bias-free nn.Linear on one-hot inputs.

    A generator for a worker: yields ``(fraction, message)`` progress and
    returns a :class:`LookupMeasurement`. Stop it between yields to cancel.

    E is ``table.torch_table()`` as float32 (V, d), at torch's current
    thread count. Each figure is the best of ``repeats`` runs after one
    warm-up (the gather, costing microseconds, gets
    :data:`GATHER_REPEATS_FACTOR` times as many runs); ids are random
    (seeded) in 0..V-1.

    Parameters
    ----------
    table : EmbeddingTable
    batch_sizes : sequence of int
        Ids per lookup (one 1-D batch each).
    repeats : int
        Timed runs per figure.
    seed : int
        Seed of the random ids.
    """
    import torch
    import torch.nn.functional as F

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
    n_steps = len(batch_sizes) * 3
    timings = []
    with torch.no_grad():
        for k, b in enumerate(batch_sizes):
            ids = torch.randint(0, v, (b,), generator=gen)
            yield 0.1 + 0.9 * (3 * k) / n_steps, _step_message(3 * k, batch_sizes)
            gather_s, g = best_time(lambda ids=ids: F.embedding(ids, e), repeats * GATHER_REPEATS_FACTOR)
            yield 0.1 + 0.9 * (3 * k + 1) / n_steps, _step_message(3 * k + 1, batch_sizes)
            onehot_s, o = best_time(lambda ids=ids: F.one_hot(ids, v).float() @ e, repeats)
            yield 0.1 + 0.9 * (3 * k + 2) / n_steps, _step_message(3 * k + 2, batch_sizes)
            linear_s, lin = best_time(lambda ids=ids: linear(F.one_hot(ids, v).float()), repeats)
            agree = bool(torch.equal(g, o) and torch.equal(g, lin))
            timings.append(BatchTiming(b, gather_s, onehot_s, linear_s, agree, 2 * v * d * b))
    yield 1.0, "Done"
    notes = () if finite else (
        "The table holds inf or NaN: one-hot @ E turns those columns into NaN, so the paths disagree.",)
    return LookupMeasurement(
        spec=getattr(table, "spec", None), vocab_size=v, dim=d, stored_dtype=str(table.dtype),
        compute_dtype=COMPUTE_DTYPE, threads=torch.get_num_threads(), repeats=repeats,
        gather_repeats=repeats * GATHER_REPEATS_FACTOR, prepare_s=prepare_s, finite=finite,
        batches=tuple(timings), notes=notes,
    )


def bench_lookup(table, batch_sizes: Sequence[int] = (1, 64), repeats: int = 5, seed: int = 0) -> LookupMeasurement:
    """:func:`iter_bench_lookup` run to its end (for the command line)."""
    gen = iter_bench_lookup(table, batch_sizes, repeats, seed)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value
