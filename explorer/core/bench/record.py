"""``bench --record``: what the recorder (explorer.record) costs a training loop.

A small transformers model built from its config (no download) trains on
random batches of a few dozen tokens; blocks of steps without the recorder
(A) and with it (B) alternate, A B A B, on the same model and optimiser, so
that a machine that speeds up or slows down affects both alike. Steps are
timed in the process's CPU time on one torch thread (on a shared machine
other processes stretch the wall-clock time of a step, not its CPU time);
wall-clock times are reported beside. The figure is the median over rounds
of (B − A) / A, the recorder's share of a step's CPU time (target: at most
10 %). Each block's time per step is its shortest step (the steps repeat the
same work; see :func:`explorer.core.bench.timing.best_time`). No Qt here.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field

from explorer.core.units import format_seconds as _t

__all__ = ["RecordBench", "RecordCase", "bench_record", "format_record", "RECORD_TARGET"]

#: the recorder may cost at most this share of a step
RECORD_TARGET = 0.10


@dataclass(frozen=True)
class RecordCase:
    """One model: its shape, and the per-step times of each A and B block (CPU and wall-clock seconds)."""

    model: str
    vocab_size: int
    dim: int
    tied: bool
    params: int
    tokens_per_batch: int
    plain_s: list[float] = field(default_factory=list)  #: CPU seconds per step, one per round
    recorded_s: list[float] = field(default_factory=list)
    plain_wall_s: list[float] = field(default_factory=list)
    recorded_wall_s: list[float] = field(default_factory=list)

    @property
    def overhead(self) -> float:
        """Median over rounds of (recorded − plain) / plain."""
        return statistics.median((b - a) / a for a, b in zip(self.plain_s, self.recorded_s))

    def as_json(self) -> dict:
        return {**asdict(self), "overhead": self.overhead, "passes": self.overhead <= RECORD_TARGET}


@dataclass(frozen=True)
class RecordBench:
    cases: list[RecordCase]
    rounds: int
    steps_per_block: int
    threads: int
    target: float = RECORD_TARGET

    def as_json(self) -> dict:
        return {"cases": [c.as_json() for c in self.cases], "rounds": self.rounds,
                "steps_per_block": self.steps_per_block, "threads": self.threads, "target": self.target}


def _models():
    """(label, model) pairs built from configs: a tied GPT-2 and an untied Llama whose
    tables are a quarter of their parameters (GPT-2 small's is 31 %, SmolLM2-135M's 21 %),
    and a worst case where the table is nearly the whole model."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    ids = {"bos_token_id": 0, "eos_token_id": 0}
    gpt2 = GPT2LMHeadModel(GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=4096, n_positions=64, **ids))
    llama = LlamaForCausalLM(LlamaConfig(num_hidden_layers=4, hidden_size=256, intermediate_size=688,
                                         num_attention_heads=4, num_key_value_heads=4, vocab_size=4096,
                                         max_position_embeddings=64, tie_word_embeddings=False, pad_token_id=0,
                                         **ids))
    worst = GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=128, n_head=4, vocab_size=8192, n_positions=64, **ids))
    return [("GPT-2 (tied)", gpt2), ("Llama (untied)", llama), ("worst case: table-only GPT-2", worst)]


def _block(model, opt, batches, recorder) -> tuple[float, float]:
    """The shortest (CPU seconds, wall seconds) of a step over ``batches`` (as timing.best_time:
    the cost of the step itself, without what other processes made it wait for)."""
    cpu, wall = [], []
    for ids in batches:
        t, c = time.perf_counter(), time.process_time()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        if recorder is not None:
            recorder.step()
        opt.zero_grad()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    return min(cpu), min(wall)


def bench_record(rounds: int = 7, steps_per_block: int = 12, batch: int = 4, seq: int = 12) -> RecordBench:
    """Time steps without and with the recorder, interleaved (``rounds`` A B pairs per model)."""
    import torch

    from explorer.core.recording.recorder import EmbeddingRecorder

    cases = []
    g = torch.Generator().manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for label, model in _models():
            model.train()
            v, d = model.get_input_embeddings().weight.shape
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
            data = [torch.randint(0, v, (batch, seq), generator=g) for _ in range(steps_per_block)]
            _block(model, opt, data[:3], None)  # warm-up
            plain, recorded = [], []
            with tempfile.TemporaryDirectory(prefix="explorer-bench-record-") as tmp:
                for _ in range(rounds):
                    plain.append(_block(model, opt, data, None))
                    rec = EmbeddingRecorder(model, tmp, snapshot_every=0, optimizer=opt, overwrite=True)
                    recorded.append(_block(model, opt, data, rec))
                    rec.close()
            tied = model.get_output_embeddings().weight is model.get_input_embeddings().weight
            cases.append(RecordCase(label, int(v), int(d), bool(tied), sum(p.numel() for p in model.parameters()),
                                    batch * seq, [a[0] for a in plain], [b[0] for b in recorded],
                                    [a[1] for a in plain], [b[1] for b in recorded]))
    finally:
        torch.set_num_threads(threads)
    return RecordBench(cases, rounds, steps_per_block, 1)


def format_record(r: RecordBench) -> str:
    lines = [f"Recorder overhead (explorer.record): {r.rounds} rounds of {r.steps_per_block} steps without (A) "
             f"and with (B) the recorder, interleaved A B A B, {r.threads} torch thread, CPU time; "
             "shortest step per block, median over rounds"]
    for c in r.cases:
        a, b = statistics.median(c.plain_s), statistics.median(c.recorded_s)
        wa, wb = statistics.median(c.plain_wall_s), statistics.median(c.recorded_wall_s)
        share = 100 * c.vocab_size * c.dim / c.params
        lines.append(f"  {c.model}: V x d = {c.vocab_size:,} x {c.dim:,} ({share:.0f} % of {c.params:,} parameters), "
                     f"{c.tokens_per_batch} tokens a batch: step {_t(a)} CPU plain, {_t(b)} recorded "
                     f"(wall clock {_t(wa)}, {_t(wb)}) -- overhead "
                     f"{100 * c.overhead:+.1f} % (target <= {100 * r.target:.0f} %: "
                     f"{'PASS' if c.overhead <= r.target else 'FAIL'})")
    lines.append("  note: timings on a shared machine vary; the interleaving makes A and B see the same load")
    return "\n".join(lines)
