"""``TrainerCallback``: the recorder inside ``transformers.Trainer``.

The callback makes an :class:`~explorer.core.recording.recorder.EmbeddingRecorder`
when training begins (the model, its optimiser and its tokenizer are then
known) and calls its ``step`` from ``on_optimizer_step``: after
``optimizer.step()`` and before ``model.zero_grad()``, so the update is
measured on the step just taken. The gradient rows were already taken by
the recorder's tensor hook during the backward passes (all of a step's
micro-batches under gradient accumulation). The loss is the model's own
``loss`` output, averaged over the step's micro-batches. Imports
transformers: :mod:`explorer.record` loads this module only when asked.
"""

from __future__ import annotations

import transformers

from explorer.core.recording.recorder import DEFAULT_SNAPSHOT_EVERY, EmbeddingRecorder

__all__ = ["TrainerCallback"]


class TrainerCallback(transformers.TrainerCallback):
    """Record the run's embedding table into ``logdir`` (see EmbeddingRecorder for the options).

    Only the main process records (``state.is_world_process_zero``).
    """

    def __init__(self, logdir, every: int = 1, snapshot_every: int = DEFAULT_SNAPSHOT_EVERY, overwrite: bool = False):
        self.logdir = logdir
        self.every, self.snapshot_every, self.overwrite = every, snapshot_every, overwrite
        self.recorder: EmbeddingRecorder | None = None

    def on_train_begin(self, args, state, control, model=None, optimizer=None, processing_class=None, **kwargs):
        if not state.is_world_process_zero or model is None:
            return
        tokenizer = processing_class or kwargs.get("tokenizer")
        if tokenizer is not None and not callable(getattr(getattr(tokenizer, "backend_tokenizer", None), "to_str",
                                                          None)):
            tokenizer = None  # a slow tokenizer or a processor: the snapshots open with ids
        self.recorder = EmbeddingRecorder(
            model, self.logdir, every=self.every, snapshot_every=self.snapshot_every, optimizer=optimizer,
            tokenizer=tokenizer, planned_steps=int(state.max_steps) if state.max_steps else None,
            overwrite=self.overwrite)

    def on_optimizer_step(self, args, state, control, **kwargs):
        if self.recorder is not None:
            self.recorder.step()

    def on_train_end(self, args, state, control, **kwargs):
        if self.recorder is not None:
            self.recorder.close()
