"""The settings of a training run of the toy model, and why some cannot work.

No Qt here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from explorer.core.errors import ExplorerError

__all__ = ["TrainConfig", "ConfigError", "OPTIMIZERS", "DEFAULT_LR", "default_lr"]

OPTIMIZERS = ("sgd", "adam", "adamw", "sparse_adam")
#: a learning rate each optimiser trains the toy model well with (d = 32, batch 64, the
#: synthetic language): plain SGD needs a step about 100 times larger than Adam's, whose
#: update is normalised per coordinate (at 0.01 SGD's loss was still 3.5 after 3,000 steps;
#: at 1.0 it falls like Adam's, about 1.4 nats after 800 steps; tests/core/test_training.py)
DEFAULT_LR = {"sgd": 1.0, "adam": 0.01, "adamw": 0.01, "sparse_adam": 0.01}


def default_lr(optimizer: str) -> float:
    """The learning rate a run with ``optimizer`` starts from (0.01 for a name not in OPTIMIZERS)."""
    return DEFAULT_LR.get(optimizer, 0.01)


class ConfigError(ExplorerError, ValueError):
    """A combination of options that cannot work; the message explains why."""


@dataclass(frozen=True)
class TrainConfig:
    """One run's settings (the view's controls, the ``train`` command's options)."""

    steps: int = 1000
    dim: int = 32
    context: int = 3
    batch_size: int = 64
    lr: float = 0.01
    optimizer: str = "adam"
    weight_decay: float = 0.0
    tied: bool = False
    sparse: bool = False
    seed: int = 0
    init_std: float = 0.02
    #: :func:`~explorer.core.training.model.train` hands out a copy of E every this many steps (0: never)
    snapshot_every: int = 0

    def validate(self) -> None:
        """Raise ConfigError for impossible combinations (explained)."""
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"unknown optimizer {self.optimizer!r}; choose one of {', '.join(OPTIMIZERS)}")
        if self.steps < 0 or self.dim < 1 or self.context < 1 or self.batch_size < 1:
            raise ConfigError("steps, d, context and batch size must be positive")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ConfigError("the learning rate must be a positive number")
        if self.weight_decay < 0 or not math.isfinite(self.weight_decay):
            raise ConfigError("weight decay must be zero or positive")
        if self.sparse and self.tied:
            raise ConfigError(
                "sparse gradients cannot be used with tying: the tied output projection gives "
                "every row a gradient each step, so the table's gradient is dense"
            )
        if self.optimizer == "sparse_adam" and not self.sparse:
            raise ConfigError("SparseAdam needs sparse gradients: turn on sparse gradients (--sparse)")
        if self.sparse and self.optimizer in ("adam", "adamw"):
            raise ConfigError(
                "dense Adam/AdamW cannot take sparse gradients: use SparseAdam with sparse gradients, "
                "or turn sparse gradients off"
            )
        if self.sparse and self.weight_decay > 0:
            raise ConfigError(
                "weight decay is not supported with sparse gradients (it would have to touch every row); "
                "set weight decay to 0 or turn sparse gradients off"
            )
