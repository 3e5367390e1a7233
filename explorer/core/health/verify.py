"""Verifying candidates with the model itself, as Magikarp does: ask it to
repeat the token and read the probability it gives to that token. A model
that cannot repeat a token (probability below :data:`THRESHOLD` in every
prompt) has, in effect, never learned it: a confirmed glitch token.

Only where the whole model can be loaded as a causal language model (a GGUF
file, or a Hugging Face folder whose architecture predicts the next token);
an encoder such as MiniLM, or a file holding only the embedding, has no
next token to ask for. Loading takes seconds and memory, so it is run on
request, in a worker. No Qt here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from explorer.core.errors import ExplorerError
from explorer.core.tokens.tokenize import HFTokenizer

__all__ = ["THRESHOLD", "Verification", "VerificationResult", "VerifyUnavailable", "model_source", "iter_verify",
           "PROMPTS"]

#: below this probability in every prompt, the model cannot repeat the token
THRESHOLD = 0.01
#: (before, between, after): the text before the token, around it, and where
#: the model's answer starts; the token's id is put in as an id, so even a
#: token no text encodes to (unreachable) can be asked about
PROMPTS = (
    ("Please repeat the text between the brackets exactly, with nothing else.\n[", "]", "\n["),
    ("Copy this word: «", "»\nCopy: «", ""),
    ("Text: \"", "\"\nThe same text again: \"", ""),
)
_CHAT_USER = "<|im_start|>user\n"
_CHAT_ASSISTANT = "<|im_end|>\n<|im_start|>assistant\n"
_BATCH = 8


class VerifyUnavailable(ExplorerError):
    """The model cannot be run here; the message says why."""


@dataclass(frozen=True)
class Verification:
    """What the model said about one token.

    Attributes
    ----------
    id : int
    piece : str
    probability : float
        The highest probability the model gave to repeating the token, over
        the prompts (0..1).
    confirmed : bool
        Below :data:`THRESHOLD`: the model cannot repeat it.
    """

    id: int
    piece: str
    probability: float
    confirmed: bool


@dataclass(frozen=True)
class VerificationResult:
    """Attributes
    ----------
    spec : str
    model : str
        What was loaded ("SmolLM2-135M-Instruct.Q4_1.gguf (LlamaForCausalLM)").
    results : tuple of Verification
        In the order asked.
    threshold : float
    prompts : int
    seconds : float
    """

    spec: str
    model: str
    results: tuple[Verification, ...]
    threshold: float
    prompts: int
    seconds: float

    def of(self, token_id: int) -> Verification | None:
        for v in self.results:
            if v.id == token_id:
                return v
        return None

    @property
    def confirmed_count(self) -> int:
        return sum(v.confirmed for v in self.results)


def model_source(table) -> tuple[str, dict]:
    """Where the whole model is: (folder, from_pretrained keyword arguments).

    Raises
    ------
    VerifyUnavailable
        With the reason (not a causal language model, no full model, no tokenizer).
    """
    if not isinstance(table.tokenizer, HFTokenizer):
        raise VerifyUnavailable(f"{table.name} has no tokenizer of its own to write a prompt with")
    path = Path(table.path) if table.path is not None else None
    if path is None:
        raise VerifyUnavailable(f"{table.name} is a table without a model around it: nothing to run")
    if path.suffix.lower() == ".gguf":
        return str(path.parent), {"gguf_file": path.name}
    folder = path if path.is_dir() else path.parent
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise VerifyUnavailable(f"{table.name}: no readable config.json beside the weights, so the model "
                                "cannot be built") from None
    archs = [a for a in config.get("architectures") or [] if isinstance(a, str)]
    if not any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
        kind = ", ".join(archs) or str(config.get("model_type", "unknown"))
        raise VerifyUnavailable(f"{table.name} is not a transformers causal language model ({kind}): there is "
                                "no next token to ask for; the indicators stand on their own")
    return str(folder), {}


def _prompt_ids(tok, token_id: int, prompt: tuple[str, str, str], chat: bool) -> list[int]:
    before, between, after = prompt
    enc = lambda text: tok.encode(text, add_special_tokens=False).ids if text else []  # noqa: E731
    if chat:
        return enc(_CHAT_USER + before) + [token_id] + enc(between + _CHAT_ASSISTANT + after.lstrip("\n"))
    return enc(before) + [token_id] + enc(between + after)


def iter_verify(table, ids: Sequence[int]) -> Iterator[tuple[float, str]]:
    """Generator for a worker: yields ``(fraction, message)``, returns a
    :class:`VerificationResult` for ``ids``.

    The model is loaded in float32 on the CPU (a GGUF file is dequantized),
    then every prompt is run for the tokens in small batches; Cancel is
    honoured between batches.

    Raises
    ------
    VerifyUnavailable
    """
    t0 = time.perf_counter()
    folder, kwargs = model_source(table)
    ids = [int(i) for i in ids if 0 <= int(i) < table.vocab_size]
    yield 0.0, "Loading the model (seconds: it is read whole)…"
    from explorer.core.runtime import limit_torch_threads

    limit_torch_threads()
    import torch
    from transformers import AutoModelForCausalLM

    try:
        model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, trust_remote_code=False,
                                                     dtype=torch.float32, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any loader failure is a reason to give the user
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise VerifyUnavailable(f"{table.name}: the whole model could not be loaded ({first})") from None
    model.eval()
    tok = table.tokenizer.backend
    chat = tok.token_to_id("<|im_start|>") is not None
    best = np.zeros(len(ids))
    steps = len(PROMPTS) * max(1, -(-len(ids) // _BATCH))
    done = 0
    for prompt in PROMPTS:
        for k in range(0, len(ids), _BATCH):
            batch = ids[k : k + _BATCH]
            seqs = [_prompt_ids(tok, i, prompt, chat) for i in batch]
            with torch.no_grad():  # every sequence has the same length: one id differs
                logits = model(input_ids=torch.tensor(seqs)).logits[:, -1, :].float()
            probs = torch.softmax(logits, dim=-1)[torch.arange(len(batch)), torch.tensor(batch)].numpy()
            best[k : k + len(batch)] = np.maximum(best[k : k + len(batch)], probs)
            done += 1
            yield 0.1 + 0.9 * done / steps, f"Asking the model to repeat {len(ids)} tokens… {done} of {steps}"
    name = f"{kwargs.get('gguf_file') or Path(folder).name} ({type(model).__name__})"
    results = tuple(Verification(i, table.shown_piece(i).text, float(p), bool(p < THRESHOLD))
                    for i, p in zip(ids, best))
    return VerificationResult(table.spec, name, results, THRESHOLD, len(PROMPTS), time.perf_counter() - t0)
