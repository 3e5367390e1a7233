"""The lesson under the training charts, written from the run's live figures.

:func:`training_lesson` reads the latest step of a
:class:`~explorer.core.training.charts.TrainingHistory` and the run's
:class:`~explorer.core.training.config.TrainConfig` and returns two
sentences: what the gradient and the optimiser did to the rows this step
(one true sentence per kind of run: untied or tied, dense or sparse, SGD,
Adam, AdamW, with or without weight decay), and how the rare rows fare.
Every figure in them is the history's own. It costs microseconds for a
small V (a few vectorised sums over V for the second sentence). No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.core.training.charts import TrainingHistory
from explorer.core.training.config import TrainConfig

__all__ = ["Lesson", "training_lesson", "OPTIMIZER_NAMES", "RARE_SHARE"]

OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam", "adamw": "AdamW", "sparse_adam": "SparseAdam"}
#: the rarest / most frequent this share of the rows are compared
RARE_SHARE = 0.1


@dataclass(frozen=True)
class Lesson:
    """The caption's two sentences and the figures they quote (percentages of V)."""

    rows: str  #: what the gradient and the optimiser did this step
    rare: str  #: rare rows against frequent ones over the run so far
    step: int
    grad_pct: float  #: rows with a gradient through the input (untied: all rows with a gradient)
    table_grad_pct: float  #: rows of the table with a gradient (tied: the whole table's)
    changed_pct: float
    decay_only_pct: float

    @property
    def text(self) -> str:
        """Both sentences (percent signs held to their figures by no-break spaces)."""
        return f"{self.rows} {self.rare}".strip()


def _pct(x: float) -> str:
    """A percentage as the readout shows it: one decimal, none at 0 or 100."""
    if x <= 0:
        return "0\u00a0%"
    if x >= 100:
        return "100\u00a0%"
    return f"{x:.1f}\u00a0%" if x < 99.95 else "99.9\u00a0%"


def _setting(cfg: TrainConfig) -> str:
    parts = ["Tied" if cfg.tied else "Untied"]
    if cfg.sparse:
        parts.append("sparse gradients")
    opt = OPTIMIZER_NAMES.get(cfg.optimizer, cfg.optimizer)
    parts.append(opt + (f" (weight decay {cfg.weight_decay:g})" if cfg.weight_decay > 0 else ""))
    return " + ".join(parts)


def _rows_sentence(cfg: TrainConfig, step: int, g: float, t: float, c: float, d: float) -> str:
    head = f"{_setting(cfg)}, step {step:,}: "
    moved_more = c > g + 1e-9
    if cfg.tied:
        text = (f"the output projection is E itself, so {_pct(t)} of the rows got a gradient "
                f"({_pct(g)} through the input) and {_pct(c)} changed")
        return head + text + " — with tying no row is left out, rare or not."
    text = f"{_pct(g)} of the rows got a gradient, {_pct(c)} changed"
    if cfg.sparse or cfg.optimizer == "sparse_adam":
        tail = (" — sparse gradients hold only the batch's rows, and "
                + ("SparseAdam keeps moments for those rows alone" if cfg.optimizer == "sparse_adam"
                   else "plain SGD moves only them")
                + ": a row whose token is absent stays exactly where it was.")
        return head + text + tail
    if cfg.weight_decay > 0:
        text += f", {_pct(d)} only because of weight decay"
        if cfg.optimizer == "adamw":
            tail = (f" — AdamW shrinks every row by lr × wd = {100 * cfg.lr * cfg.weight_decay:.3g}\u00a0% each step, "
                    "used or not, so rows whose momentum has died out still drift toward 0.")
        elif cfg.optimizer == "sgd":
            tail = (" — SGD adds wd × row to every row's gradient, so rows absent from the batch "
                    "shrink toward 0 while the others learn.")
        else:
            tail = (" — Adam adds wd × row to every row's gradient; its momentum carries that decay on, "
                    "so almost every row moves every step.")
        return head + text + tail
    if cfg.optimizer == "sgd":
        return head + text + " — plain SGD moves only the rows with a gradient: a rare row waits for its token."
    if moved_more:
        tail = f" — {OPTIMIZER_NAMES.get(cfg.optimizer, cfg.optimizer)}'s momentum keeps moving rows that got none"
        if c < 99.95:
            tail += " (rows unseen for long have none left)"
        return head + text + tail + "."
    return head + text + ": only the rows with a gradient moved (no momentum yet)."


def _rare_sentence(cfg: TrainConfig, h: TrainingHistory) -> str:
    v = h.vocab_size
    k = max(1, int(round(RARE_SHARE * v)))
    if h.n == 0 or v < 2 * k:
        return ""
    frequent, rare = h.order[:k], h.order[-k:]
    share = f"{round(100 * RARE_SHARE):d}\u00a0%"
    if not cfg.tied:
        f_pct = 100.0 * h.grad_count[frequent].mean() / h.n
        r_pct = 100.0 * h.grad_count[rare].mean() / h.n
        if r_pct >= f_pct:
            return ""
        return (f"Over {h.n:,} steps the rarest {share} of the rows got a gradient in {_pct(r_pct)} of the steps, "
                f"the most frequent {share} in {_pct(f_pct)}: rare rows lag.")
    drift = h.drift()
    if h.frame is None or h.frame.step <= 0 or not np.isfinite(drift).all():
        return ""
    f_d, r_d = float(drift[frequent].mean()), float(drift[rare].mean())
    head = (f"The rarest {share} of the rows moved {r_d:.3g} from their start on average, "
            f"the most frequent {share} {f_d:.3g}")
    if r_d < f_d:
        return head + (": every row gets a gradient, but a rare token's is mostly the small push-down of its "
                       "logit, so its row moves less.")
    return head + ": with tying, rare rows keep up."


def training_lesson(cfg: TrainConfig, h: TrainingHistory) -> Lesson | None:
    """The caption for the latest step of ``h`` under the settings ``cfg`` (None before the first step)."""
    if h is None or h.n == 0:
        return None
    v = h.vocab_size
    last = {name: float(h.series(name)[-1]) for name in
            ("step", "input_grad_rows", "grad_rows", "changed_rows", "decay_only_rows")}
    g, t = 100 * last["input_grad_rows"] / v, 100 * last["grad_rows"] / v
    c, d = 100 * last["changed_rows"] / v, 100 * last["decay_only_rows"] / v
    step = int(last["step"])
    return Lesson(rows=_rows_sentence(cfg, step, g, t, c, d), rare=_rare_sentence(cfg, h), step=step,
                  grad_pct=g, table_grad_pct=t, changed_pct=c, decay_only_pct=d)
