"""A tiny causal language model trained here with a known answer planted in
it: some tokens of its vocabulary never occur in the training text.

The model is a transformers Llama (one layer, d = 32), its input rows
start N(0, 1) so that a never-seen token's input row has a typical norm
(untied; a tied table keeps transformers' small initialisation, as tied
models do) and it is trained with Adam for a few hundred steps on sequences drawn
from a fixed random bigram chain over the other tokens. Its tokenizer
reserves four ``<unusedN>`` tokens (never in the text either), as real
tokenizers do, and holds no other special token. Saved in Hugging Face
layout, so the explorer opens it like any model folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["PlantedLM", "build_planted_lm"]

VOCAB = 320
RESERVED = 4
UNSEEN = 20


@dataclass
class PlantedLM:
    folder: Path
    tied: bool
    unseen: list[int]  # ordinary tokens that never occur in the training text
    reserved: list[int]  # the tokenizer's <unusedN> tokens (never in the text either)
    final_loss: float


def _tokenizer(folder: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {f"<unused{i}>": i for i in range(RESERVED)}
    vocab.update({f"w{i}": i for i in range(RESERVED, VOCAB)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unused0>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))


def build_planted_lm(folder: Path, tied: bool, steps: int = 300, seed: int = 0) -> PlantedLM:
    """Train and save the planted model (a few seconds on one core)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    words = np.arange(RESERVED, VOCAB)
    unseen = sorted(int(i) for i in rng.choice(words, UNSEEN, replace=False))
    seen = np.setdiff1d(words, unseen)
    # a bigram chain: each seen token is followed by one of 8 others, Zipf-weighted
    nexts = rng.choice(seen, size=(VOCAB, 8))
    weights = 1.0 / np.arange(1, 9)
    weights /= weights.sum()

    def batch(n: int, length: int) -> torch.Tensor:
        out = np.empty((n, length), np.int64)
        out[:, 0] = rng.choice(seen, n)
        for t in range(1, length):
            out[:, t] = nexts[out[:, t - 1], rng.choice(8, n, p=weights)]
        return torch.from_numpy(out)

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                      tie_word_embeddings=tied, bos_token_id=None, eos_token_id=None, pad_token_id=None)
    model = LlamaForCausalLM(cfg)
    if not tied:  # an untied input row starts N(0, 1): a never-seen one keeps a typical norm
        with torch.no_grad():
            model.get_input_embeddings().weight.normal_(0.0, 1.0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss = torch.tensor(float("nan"))
    for _ in range(steps):
        x = batch(16, 24)
        loss = model(input_ids=x, labels=x).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.save_pretrained(str(folder))
    _tokenizer(folder)
    cfg_path = folder / "config.json"
    config = json.loads(cfg_path.read_text())
    assert config["tie_word_embeddings"] is tied
    return PlantedLM(folder, tied, unseen, list(range(RESERVED)), float(loss.detach()))
