"""Tiny random transformers models (GPT-2, BERT, Llama) saved with
``save_pretrained`` in Hugging Face layout, each beside its own tokenizer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.support.tokenizer_files import save_tokenizer, train_bpe

ARCHS = ("gpt2", "bert", "llama")

#: every (arch, dtype, tied, sharded) combination the tests build
ZOO_KEYS = [
    (arch, dtype, tied, sharded)
    for arch in ARCHS
    for dtype in ("float32", "float16", "bfloat16")
    for tied in (True, False)
    for sharded in (False, True)
]


def zoo_id(key) -> str:
    arch, dtype, tied, sharded = key
    return f"{arch}-{dtype}-{'tied' if tied else 'untied'}-{'sharded' if sharded else 'single'}"


@dataclass
class BuiltModel:
    folder: Path
    arch: str
    dtype: str  # float32, float16, bfloat16
    tied: bool
    sharded: bool
    embedding: np.ndarray  # get_input_embeddings().weight as float32
    n_params: int  # sum(p.numel() for p in model.parameters())
    itemsize: int
    native: object = None  # the same weight as a torch tensor in its own dtype


def _config(arch: str, vocab: int, hidden: int, tied: bool):
    from transformers import BertConfig, GPT2Config, LlamaConfig

    if arch == "gpt2":
        return GPT2Config(
            vocab_size=vocab, n_embd=hidden, n_layer=1, n_head=2, n_positions=64, tie_word_embeddings=tied,
            bos_token_id=2, eos_token_id=3,
        )
    if arch == "bert":
        return BertConfig(
            vocab_size=vocab, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=2 * hidden, max_position_embeddings=64, tie_word_embeddings=tied,
        )
    if arch == "llama":
        return LlamaConfig(
            vocab_size=vocab, hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
            num_key_value_heads=1, intermediate_size=2 * hidden, max_position_embeddings=64,
            tie_word_embeddings=tied,
        )
    raise ValueError(arch)


def _model_class(arch: str, headless: bool = False):
    import transformers as tf

    if headless:
        return {"gpt2": tf.GPT2Model, "bert": tf.BertModel, "llama": tf.LlamaModel}[arch]
    return {"gpt2": tf.GPT2LMHeadModel, "bert": tf.BertForMaskedLM, "llama": tf.LlamaForCausalLM}[arch]


def tiny_model(arch: str, vocab: int, dtype: str = "float32", tied: bool = True, hidden: int = 32,
               headless: bool = False, seed: int = 0):
    """A tiny random transformers model of ``arch`` in memory (seeded, eval mode)."""
    import torch

    torch.manual_seed(seed)
    model = _model_class(arch, headless)(_config(arch, vocab, hidden, tied))
    return model.to(getattr(torch, dtype)).eval()


def build_model(
    folder: Path,
    arch: str,
    dtype: str = "float32",
    tied: bool = True,
    sharded: bool = False,
    hidden: int = 32,
    extra_rows: int = 0,
    headless: bool = False,
    tokenizer=None,
    vocab: int | None = None,
    seed: int = 0,
) -> BuiltModel:
    """Build a tiny random model of ``arch`` with its own tokenizer and save
    both into ``folder`` in Hugging Face layout.

    ``vocab`` defaults to the tokenizer's size plus ``extra_rows`` padding rows.
    """
    import torch

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = tokenizer if tokenizer is not None else train_bpe()
    if vocab is None:
        vocab = tok.get_vocab_size() + extra_rows
    model = tiny_model(arch, vocab, dtype=dtype, tied=tied, hidden=hidden, headless=headless, seed=seed)
    native = model.get_input_embeddings().weight.detach().clone()
    emb = native.float().numpy().copy()
    n_params = sum(p.numel() for p in model.parameters())
    kwargs = {"max_shard_size": "8KB"} if sharded else {}
    model.save_pretrained(str(folder), **kwargs)
    save_tokenizer(tok, folder)
    return BuiltModel(
        folder=folder, arch=arch, dtype=dtype, tied=tied, sharded=sharded, embedding=emb,
        n_params=n_params, itemsize=torch.empty((), dtype=getattr(torch, dtype)).element_size(), native=native,
    )
