"""The sentence beside the training charts: what happened to the run."""

from __future__ import annotations

from explorer.core.errors import user_message
from explorer.core.training.session import Phase, StopReason, TrainingSession
from explorer.ui.training.controls import OPTIMIZER_LABELS

__all__ = ["run_message", "run_caption", "sentence", "EMPTY_TEXT"]

EMPTY_TEXT = "Press Start to train a small model and watch its embedding table learn."


def sentence(text: str) -> str:
    """``text`` as a sentence: a capital first letter and a full stop."""
    text = text.strip()
    if not text:
        return ""
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def run_message(session: TrainingSession) -> tuple[str, bool] | None:
    """(text, is an error) for the session's phase; None while preparing
    (the job's own progress messages are shown then)."""
    s = session
    step = f"{s.last_step:,}"
    if s.stop_reason is StopReason.MODEL_CHANGED and s.phase in (Phase.STOPPING, Phase.STOPPED):
        return f"The model changed, so the run on its tokenizer stopped at step {step}.", False
    if s.phase is Phase.PAUSED:
        return (f"Paused at step {step}: the charts show the run so far." if s.held else "Pausing…"), False
    if s.phase is Phase.STOPPING:
        return "Stopping…", False
    if s.phase is Phase.STOPPED:
        return f"Stopped at step {step}.", False
    if s.phase is Phase.FINISHED:
        return f"Finished {step} steps. Save the model to open it in the explorer.", False
    if s.phase is Phase.FAILED:
        text = sentence(user_message(s.error))
        if s.last_step:
            text += " The charts show the run up to there."
        return text, True
    if s.phase is Phase.PREPARING:
        return None
    return "", False


def run_caption(session: TrainingSession) -> str:
    """One line about the run the charts show: corpus, table, optimiser, length."""
    run = session.run
    if run is None:
        return EMPTY_TEXT
    cfg, corpus = run.cfg, run.corpus
    source = "Synthetic language" if corpus.classes else "Text"
    optimizer = {key: label for label, key in OPTIMIZER_LABELS}.get(cfg.optimizer, cfg.optimizer)
    parts = [source, f"E {corpus.vocab_size:,} × {cfg.dim:,}, {'tied' if cfg.tied else 'untied'}"
             + (", sparse gradients" if cfg.sparse else ""),
             f"{optimizer}, lr {cfg.lr:g}" + (f", weight decay {cfg.weight_decay:g}" if cfg.weight_decay else ""),
             f"{cfg.steps:,} steps of {cfg.batch_size:,} examples"]
    return " · ".join(parts)
