"""Record your own training run for the explorer to watch (``python -m explorer --watch LOGDIR``).

In a plain PyTorch loop::

    from explorer.record import EmbeddingRecorder

    recorder = EmbeddingRecorder(model, "runs/first", snapshot_every=100, optimizer=optimizer)
    for batch in data:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        recorder.step(loss)          # after optimizer.step()
        optimizer.zero_grad()
    recorder.close()

With ``transformers.Trainer``::

    from explorer.record import TrainerCallback

    Trainer(model, args, train_dataset=ds, callbacks=[TrainerCallback("runs/first")]).train()

Then ``python -m explorer runs runs/first`` prints the steps, and
``python -m explorer --watch runs/first`` charts them while they are written.
The format is described in :mod:`explorer.core.recording`. Importing this
module is cheap: torch and transformers load when a recorder is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names, for type checkers and linters; loaded on first use below
    from explorer.core.recording.format import RecordingError
    from explorer.core.recording.recorder import EmbeddingRecorder
    from explorer.core.recording.trainer_callback import TrainerCallback

__all__ = ["EmbeddingRecorder", "TrainerCallback", "RecordingError"]


def __getattr__(name: str):
    if name == "EmbeddingRecorder":
        from explorer.core.recording.recorder import EmbeddingRecorder

        return EmbeddingRecorder
    if name == "TrainerCallback":
        from explorer.core.recording.trainer_callback import TrainerCallback

        return TrainerCallback
    if name == "RecordingError":
        from explorer.core.recording.format import RecordingError

        return RecordingError
    raise AttributeError(f"module 'explorer.record' has no attribute {name!r}")
