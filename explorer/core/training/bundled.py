"""The bundled default model: trained by the project's own code on the
synthetic corpus, saved in Hugging Face layout under resources/default.

Regenerate it with ``python -m explorer build-default``: bit for bit on the
same CPU (same corpus, same seed, one thread). On a CPU whose float kernels
sum in another order the weights differ (training is chaotic) while the
vocabulary, config, classes and the way the classes cluster stay; that is
what tests/core/test_bundled.py checks. No Qt here.
"""

from __future__ import annotations

from pathlib import Path

from explorer.core.training.language import make_corpus
from explorer.core.training.model import ToyLM, TrainConfig, save_model_folder, train

__all__ = ["DEFAULT_CONFIG", "CORPUS_SENTENCES", "CORPUS_SEED", "build_default"]

CORPUS_SENTENCES = 20000
CORPUS_SEED = 0
DEFAULT_CONFIG = TrainConfig(steps=4000, dim=32, context=3, batch_size=128, lr=0.01, optimizer="adam",
                             tied=False, seed=0)
EXAMPLE_TEXT = "the quick fox chases the sleepy cat in the park ."


def build_default(out_dir: str | Path, progress=None, steps: int | None = None):
    """Train the default model and save it; deterministic on one CPU (one thread).
    ``steps`` trains that many steps instead of the default config's (a quick build).

    Returns the trained torch module.
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # summation order fixed -> identical bits every run on this CPU
    try:
        corpus = make_corpus(CORPUS_SENTENCES, CORPUS_SEED)
        cfg = TrainConfig(**{**DEFAULT_CONFIG.__dict__, **({} if steps is None else {"steps": int(steps)})})
        torch.manual_seed(cfg.seed)
        model = ToyLM.build(corpus.vocab_size, cfg)
        for m in train(corpus.ids, corpus.vocab_size, cfg, model=model):
            if progress and m.step % 100 == 0:
                progress(m.step / cfg.steps, m.loss)
        save_model_folder(model, cfg, corpus.words, corpus.classes, out_dir, example_text=EXAMPLE_TEXT)
        return model
    finally:
        torch.set_num_threads(threads)
