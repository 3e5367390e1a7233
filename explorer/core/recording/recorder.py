"""The recorder a training loop calls: :class:`EmbeddingRecorder`.

It hooks the embedding weight (a tensor hook: the gradient is seen as it
is computed, reduced at once to a boolean per row, never kept or written),
the embedding's lookups (which ids the batch held) and, for a transformers
model, the forward output's ``loss``; ``step()`` after ``optimizer.step()``
then compares the table with a copy of it from the last recorded step and
appends one line to ``steps.jsonl``. See :mod:`explorer.core.recording` for
the format and the cost. No Qt here; torch is imported when a recorder is made.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

from explorer.core.recording.format import (
    HEADER_FILE,
    INPUT_TENSOR,
    OUTPUT_TENSOR,
    SNAPSHOT_DIR,
    STEPS_FILE,
    RecordingError,
    RunHeader,
    encode_rows,
    header_text,
    snapshot_name,
    write_atomically,
)

__all__ = ["EmbeddingRecorder", "DEFAULT_SNAPSHOT_EVERY"]

DEFAULT_SNAPSHOT_EVERY = 100


def _tables(obj):
    """(model or None, input nn.Embedding-like module, untied output module or None, tied)."""
    import torch

    if isinstance(obj, torch.nn.Embedding):
        return None, obj, None, False
    get_in = getattr(obj, "get_input_embeddings", None)
    if not callable(get_in):
        raise RecordingError(f"cannot record a {type(obj).__name__}: give an nn.Embedding, a transformers model, "
                             "or a module with get_input_embeddings()")
    inp = get_in()
    weight = getattr(inp, "weight", None)
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        raise RecordingError(f"{type(obj).__name__}.get_input_embeddings() has no 2-D weight to record")
    get_out = getattr(obj, "get_output_embeddings", None)
    out = get_out() if callable(get_out) else None
    out_w = getattr(out, "weight", None)
    if not isinstance(out_w, torch.Tensor) or out_w.dim() != 2 or out_w.shape[1] != weight.shape[1]:
        return obj, inp, None, False
    if out_w is weight or out_w.data_ptr() == weight.data_ptr():
        return obj, inp, None, True
    return obj, inp, out, False


def _inner_optimizer(opt):
    """The torch optimizer inside wrappers (accelerate's AcceleratedOptimizer keeps it as .optimizer)."""
    seen = 0
    while opt is not None and not hasattr(opt, "param_groups") and seen < 5:
        opt, seen = getattr(opt, "optimizer", None), seen + 1
    while hasattr(getattr(opt, "optimizer", None), "param_groups") and seen < 5:
        opt, seen = opt.optimizer, seen + 1
    return opt


class _Table:
    """One recorded weight: its gradient rows (from a tensor hook) and, when ``diff``, a copy
    of it from the last record to find the rows that changed."""

    def __init__(self, weight, recorder: EmbeddingRecorder, diff: bool = True):
        import torch

        self.weight = weight
        self.prev = weight.detach().clone() if diff else None
        self._delta = torch.empty_like(self.prev) if diff else None
        self.mask = torch.zeros(weight.shape[0], dtype=torch.bool, device=weight.device)
        self.hook_norms: list[float] = []  # ‖gradient‖ of each backward pass of the step
        self._recorder = recorder
        self.handle = weight.register_hook(self._on_grad)

    def _on_grad(self, grad):
        if not self._recorder.armed:
            return None
        with _no_grad():
            if grad.is_sparse:
                g = grad.coalesce()
                rows = g.indices()[0]
                vals = g.values().reshape(rows.shape[0], -1)
                self.mask[rows[_nonzero_rows(vals)]] = True
                norm = float(_norm(vals))
            else:
                rows, norm = _rows_and_norm(grad)
                self.mask |= rows
        self.hook_norms.append(norm)
        return None

    def grad_norm(self) -> float | None:
        """‖∇W‖ of the step: the hook's when one backward pass made it, else from ``.grad``
        (None: several passes, and the gradient already cleared)."""
        if len(self.hook_norms) == 1:
            return self.hook_norms[0]
        g = self.weight.grad
        if g is None:
            return None
        with _no_grad():
            return float(_norm(g.coalesce().values() if g.is_sparse else g))

    def diff(self):
        """(changed rows mask, ‖W − W_prev‖); the copy then follows W. Passes over
        V x d: the subtraction (into a kept buffer), the row norms, the copy."""
        import torch

        with _no_grad():
            w = self.weight.detach()
            delta = torch.sub(w, self.prev, out=self._delta)
            changed, norm = _rows_and_norm(delta)
            self.prev.copy_(w)
        return changed, norm

    def reset(self) -> None:
        self.mask.zero_()
        self.hook_norms.clear()


def _nonzero_rows(x):
    """Rows of ``x`` (n, d) holding a value other than 0 (NaN counts), shape (n,) bool.

    Two reductions, no n x d temporary: on the CPU torch's ``ne(0).any(1)`` and
    ``count_nonzero`` are some 20 times slower than ``amax``/``amin`` for this."""
    return x.amax(dim=1).ne(0) | x.amin(dim=1).ne(0)


def _rows_and_norm(x):
    """(rows of ``x`` (n, d) holding a non-zero value, shape (n,) bool; ‖x‖ Frobenius), exactly.

    One pass (the row norms) when most rows are non-zero; a row whose norm
    underflowed to 0 (every value below about 4e-23) is checked again value
    by value, all rows at once (two more passes) when many rows are zero."""
    import torch

    rn = torch.linalg.vector_norm(x, dim=1, dtype=torch.float32)
    norm = float(torch.linalg.vector_norm(rn))
    rows = rn.ne(0)  # NaN and inf rows count as non-zero
    zero = (~rows).nonzero().reshape(-1)
    if zero.numel() * 8 > x.shape[0]:
        rows = _nonzero_rows(x)
    elif zero.numel():
        rows[zero] = _nonzero_rows(x.index_select(0, zero))
    return rows, norm


def _norm(x):
    import torch

    return torch.linalg.vector_norm(x, dtype=torch.float32)


def _no_grad():
    import torch

    return torch.no_grad()


def _ids(mask) -> np.ndarray:
    return mask.nonzero().reshape(-1).cpu().numpy().astype(np.int64)


class EmbeddingRecorder:
    """Record what each optimiser step does to an embedding table.

    Call :meth:`step` after ``optimizer.step()`` (before ``zero_grad`` is
    not needed: the gradient rows are taken as the backward pass computes
    them), and :meth:`close` at the end (or use it as a context manager).

    Parameters
    ----------
    model_or_embedding : nn.Module
        An ``nn.Embedding`` (sparse ones too), a transformers model (its
        input embeddings, and its output embeddings when untied), or any
        module with ``get_input_embeddings()``.
    logdir : str or Path
        The directory written (created if needed).
    every : int
        Record every this many steps (the others cost only a counter).
        Changed rows and update norms are then over the steps since the last record.
    snapshot_every : int
        Write the table to ``snapshots/step-N.safetensors`` every this many
        steps (0: only before the first step and at close).
    optimizer : torch.optim.Optimizer, optional
        Named in the header (the lesson's words), and its momentum state
        tells a row moved by weight decay alone from one moved by momentum.
    tokenizer : optional
        A transformers fast tokenizer or a ``tokenizers.Tokenizer``: saved
        as ``snapshots/tokenizer.json`` so a snapshot opens with its pieces.
    name : str, optional
        The run's name (default: the model's ``name_or_path`` or class).
    planned_steps : int, optional
        How long the run will be (the charts' x axis).
    overwrite : bool
        Start over in a directory that already holds a run (else RecordingError).
    """

    def __init__(self, model_or_embedding, logdir, every: int = 1, snapshot_every: int = DEFAULT_SNAPSHOT_EVERY, *,
                 optimizer=None, tokenizer=None, name: str | None = None, planned_steps: int | None = None,
                 overwrite: bool = False):
        if int(every) < 1 or int(snapshot_every) < 0:
            raise RecordingError("every must be at least 1 and snapshot_every at least 0")
        model, inp, out, tied = _tables(model_or_embedding)
        self.logdir = Path(logdir)
        self.every, self.snapshot_every = int(every), int(snapshot_every)
        self.steps_done = 0
        self.armed = self.every == 1
        self._optimizer = _inner_optimizer(optimizer)
        self._start = time.perf_counter()
        self._losses: list = []
        self._input_module = inp
        self._seen = None
        self._last_snapshot = -1
        self._closed = False
        steps_path = self.logdir / STEPS_FILE
        if steps_path.exists() and not overwrite:
            raise RecordingError(f"{self.logdir} already holds a recorded run; record into a new directory, or "
                                 "pass overwrite=True to start over")
        self.logdir.mkdir(parents=True, exist_ok=True)
        (self.logdir / SNAPSHOT_DIR).mkdir(exist_ok=True)
        weight = inp.weight
        self.header = RunHeader(
            name=name or _model_name(model_or_embedding), vocab_size=int(weight.shape[0]), dim=int(weight.shape[1]),
            tied=tied, has_output=out is not None or tied, dtype=str(weight.dtype).removeprefix("torch."),
            sparse=bool(getattr(inp, "sparse", False)), optimizer=_optimizer_name(self._optimizer),
            lr=_group(self._optimizer, "lr"), weight_decay=_group(self._optimizer, "weight_decay"),
            every=self.every, snapshot_every=self.snapshot_every, planned_steps=planned_steps)
        write_atomically(self.logdir / HEADER_FILE, lambda p: p.write_text(header_text(self.header), "utf-8"))
        # beside the snapshots, so that the app's loader knows the tying of a lone snapshot file
        # (a model with an output matrix is named as one with a language-model head, which is what the
        # loader asks of a config before it calls a table without an output tensor tied)
        snap_config = {"tie_word_embeddings": tied, "vocab_size": self.header.vocab_size,
                       "hidden_size": self.header.dim, "_name_or_path": self.header.name}
        if self.header.has_output:
            snap_config["architectures"] = [type(model).__name__, "RecordedForCausalLM"]
        snap_config = json.dumps(snap_config)
        write_atomically(self.logdir / SNAPSHOT_DIR / "config.json", lambda p: p.write_text(snap_config, "utf-8"))
        self._file = open(steps_path, "w", encoding="utf-8")  # noqa: SIM115 - open for the run's length
        self._input = _Table(weight, self)
        # the output matrix: its gradient rows only (a second V x d diff would double the cost)
        self._output = _Table(out.weight, self, diff=False) if out is not None else None
        self._handles = [self._input.handle] + ([self._output.handle] if self._output is not None else [])
        self._handles.append(inp.register_forward_pre_hook(self._on_lookup))
        if model is not None:
            self._handles.append(model.register_forward_hook(self._on_output))
        if tokenizer is not None:
            _save_tokenizer(tokenizer, self.logdir / SNAPSHOT_DIR / "tokenizer.json")
        self.snapshot()

    # -- hooks ----------------------------------------------------------------------------------
    def _on_lookup(self, module, args):
        """The ids looked up in this step (training forwards only)."""
        import torch

        if not (self.armed and module.training and torch.is_grad_enabled()) or not args:
            return None
        ids = args[0]
        if isinstance(ids, torch.Tensor) and not ids.is_floating_point():
            if self._seen is None:
                self._seen = torch.zeros(self.header.vocab_size, dtype=torch.bool, device=ids.device)
            flat = ids.detach().reshape(-1)
            self._seen[flat[(flat >= 0) & (flat < self.header.vocab_size)]] = True
        return None

    def _on_output(self, module, args, output):
        """The model's own ``loss`` output (transformers models given labels)."""
        import torch

        if not (self.armed and module.training and torch.is_grad_enabled()):
            return None
        loss = output.get("loss") if isinstance(output, dict) else getattr(output, "loss", None)
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            self._losses.append(loss.detach())
        return None

    # -- steps --------------------------------------------------------------------------------
    def step(self, loss=None) -> None:
        """One optimiser step is done: record it (every ``every`` steps), snapshot when due.

        ``loss`` (a float or a one-element tensor) is recorded when given;
        otherwise the mean ``loss`` output of the model's training forwards
        in this step, if it had one.
        """
        if self._closed:
            raise RecordingError("this recorder was closed; make a new one for a new run")
        self.steps_done += 1
        if self.armed:
            self._write(self._record(loss))
        if self.snapshot_every and self.steps_done % self.snapshot_every == 0:
            self.snapshot()
        self.armed = (self.steps_done + 1) % self.every == 0

    def _record(self, loss) -> dict:
        v = self.header.vocab_size
        t_in, t_out = self._input, self._output
        if loss is None and self._losses:
            loss = sum(float(x) for x in self._losses) / len(self._losses)
        if hasattr(loss, "detach"):
            loss = loss.detach()
        loss = float(loss) if loss is not None else None
        changed, update_norm = t_in.diff()
        grad = t_in.mask
        without = changed & ~grad
        if bool(without.any()):
            moving = self._momentum_rows(t_in.weight)
            decay_only = without & ~moving if moving is not None else without
        else:
            decay_only = without
        seen = self._seen
        rec = {
            "step": self.steps_done,
            "seconds": round(time.perf_counter() - self._start, 4),
            "loss": loss if loss is not None and math.isfinite(loss) else None,
            "batch_distinct_ids": int(seen.sum()) if seen is not None else None,
            "rows_with_gradient": encode_rows(_ids(grad), v),
            "rows_changed": encode_rows(_ids(changed), v),
            "rows_decay_only": encode_rows(_ids(decay_only), v),
            "grad_norm": t_in.grad_norm(),
            "update_norm": update_norm,
        }
        if self.header.tied:
            rec["input_rows_with_gradient"] = encode_rows(_ids(seen) if seen is not None else [], v)
        if t_out is not None:
            rec.update(output_rows_with_gradient=encode_rows(_ids(t_out.mask), t_out.mask.shape[0]),
                       output_grad_norm=t_out.grad_norm())
            t_out.reset()
        t_in.reset()
        if seen is not None:
            seen.zero_()
        self._losses.clear()
        return rec

    def _momentum_rows(self, param):
        """Rows whose optimiser state carries momentum (they move without a gradient), or None if unknown."""
        opt = self._optimizer
        state = getattr(opt, "state", None) if opt is not None else None
        if state is None:
            return None
        st = state.get(param) or {}
        buf = st.get("exp_avg", st.get("momentum_buffer"))
        if buf is None:
            import torch

            return torch.zeros(param.shape[0], dtype=torch.bool, device=param.device)
        with _no_grad():
            if buf.is_sparse:
                buf = buf.to_dense()
            return _nonzero_rows(buf)

    def _write(self, rec: dict) -> None:
        # one write of the whole line, newline last: a reader (or a crash) never sees half a step as whole
        self._file.write(json.dumps(rec, separators=(",", ":")) + "\n")
        self._file.flush()

    def snapshot(self) -> Path:
        """Write the table(s) now to ``snapshots/step-N.safetensors`` (atomically)."""
        from safetensors.torch import save_file

        step = self.steps_done
        path = self.logdir / SNAPSHOT_DIR / snapshot_name(step)
        if self._last_snapshot == step:
            return path
        with _no_grad():
            tensors = {INPUT_TENSOR: self._input.weight.detach().to("cpu").contiguous().clone()}
            if self._output is not None:
                tensors[OUTPUT_TENSOR] = self._output.weight.detach().to("cpu").contiguous().clone()
        write_atomically(path, lambda p: save_file(tensors, str(p), metadata={"step": str(step)}))
        self._last_snapshot = step
        return path

    def close(self) -> None:
        """A last snapshot, hooks removed, the step file closed (safe to call twice)."""
        if self._closed:
            return
        self._closed = True
        for h in self._handles:
            h.remove()
        self._file.close()
        self.snapshot()

    def __enter__(self) -> EmbeddingRecorder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _model_name(obj) -> str:
    cfg = getattr(obj, "config", None)
    name = getattr(cfg, "_name_or_path", None) or getattr(obj, "name_or_path", None)
    if isinstance(name, str) and name:
        return name
    model_type = getattr(cfg, "model_type", None)
    return f"{model_type} ({type(obj).__name__})" if model_type else type(obj).__name__


def _optimizer_name(opt) -> str | None:
    return type(opt).__name__.lower() if opt is not None else None


def _group(opt, key: str) -> float | None:
    groups = getattr(opt, "param_groups", None)
    if not groups:
        return None
    value = groups[0].get(key)
    return float(value) if isinstance(value, (int, float)) else None


def _save_tokenizer(tokenizer, path: Path) -> None:
    backend = getattr(tokenizer, "backend_tokenizer", None) or tokenizer
    if not callable(getattr(backend, "to_str", None)):
        raise RecordingError(f"cannot save a {type(tokenizer).__name__} as tokenizer.json: give a fast "
                             "transformers tokenizer or a tokenizers.Tokenizer")
    text = backend.to_str()
    write_atomically(path, lambda p: p.write_text(text, "utf-8"))
