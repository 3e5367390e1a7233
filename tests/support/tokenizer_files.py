"""Real tokenizers for the source tests: trained with the tokenizers library
on a few sentences and saved with transformers, or written as tokenizer.json
documents beside a small safetensors table (for tokenizers that fail at run
time)."""

from __future__ import annotations

import json
from pathlib import Path

SENTENCES = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a bank by the river is green",
    "she put money in the bank",
    "unhappiness is not happiness",
    "the robot arm lifted a box with a tool",
    "tokens become rows of an embedding table",
    "every row is a vector of numbers",
    "small models learn slowly but surely",
    "hello world, hello embeddings!",
]

#: a text every tokenizer built here can encode without unknown pieces
SAMPLE_TEXT = "the cat sat on the mat by the river bank"

SPECIAL = ["<unk>", "<pad>", "<s>", "</s>"]


def train_bpe(vocab_size: int = 160):
    """A BPE tokenizer trained on :data:`SENTENCES`, adding <s> ... </s>."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL, show_progress=False)
    tok.train_from_iterator(SENTENCES, trainer)
    bos, eos = tok.token_to_id("<s>"), tok.token_to_id("</s>")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", bos), ("</s>", eos)]
    )
    return tok


def train_wordlevel(extra_words: int = 0):
    """A word-level tokenizer over the words of :data:`SENTENCES` (plus
    ``extra_words`` made-up words, to make a vocabulary larger than a table)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    corpus = list(SENTENCES) + [f"word{i}" for i in range(extra_words)]
    trainer = trainers.WordLevelTrainer(special_tokens=SPECIAL, show_progress=False)
    tok.train_from_iterator(corpus, trainer)
    return tok


def save_tokenizer(tok, folder: Path) -> None:
    """Wrap in transformers' fast tokenizer and save it beside the weights."""
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    fast.save_pretrained(str(folder))


# --------------------------------------------------------------------------
# Folders around a given tokenizer.json (for tokenizers that fail at run time)
# --------------------------------------------------------------------------


def wordlevel_json(vocab: dict[str, int], unk: str = "[UNK]", pre_tokenizer: dict | None = None) -> dict:
    """A tokenizer.json document of a WordLevel model over ``vocab``."""
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": pre_tokenizer or {"type": "Whitespace"}, "post_processor": None, "decoder": None,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": unk},
    }


#: a Split pre-tokenizer whose pattern backtracks without end on "aaaa...b":
#: the onig engine gives up and the tokenizers library panics (a BaseException)
BACKTRACKING_SPLIT = {"type": "Split", "pattern": {"Regex": "(a|aa)+$"}, "behavior": "Isolated", "invert": False}


def folder_with_tokenizer(folder: Path, tokenizer: dict | str, vocab: int = 16, dim: int = 8, seed: int = 0) -> Path:
    """A model folder: a float32 ``model.embed_tokens.weight`` (vocab x dim)
    written with safetensors, beside the given tokenizer.json (a dict or raw text)."""
    import torch
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    g = torch.Generator().manual_seed(seed)
    save_file({"model.embed_tokens.weight": torch.randn(vocab, dim, generator=g)}, str(folder / "model.safetensors"))
    text = tokenizer if isinstance(tokenizer, str) else json.dumps(tokenizer)
    (folder / "tokenizer.json").write_text(text)
    return folder
